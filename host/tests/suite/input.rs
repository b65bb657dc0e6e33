//! `toolhost run --input-format stream-json` through the real binary against
//! the mock model server: prompts, steering and follow-up messages sent
//! while a run works, interrupts, and the end of stdin. The request bodies
//! show where each message reached the model.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use super::common::mock_model::{MockModel, Reply, openai_text, openai_tool_call};
use super::common::{Workspace, test_plugins};

fn tool_call(id: &str, name: &str, arguments: Value) -> Reply {
    Reply::sse_body(openai_tool_call(id, name, &arguments))
}

fn text(reply: &str) -> Reply {
    Reply::sse_body(openai_text(reply))
}

fn user(text: &str, delivery: Option<&str>) -> String {
    let mut line = json!({"type": "user", "message": {"role": "user", "content": text}});
    if let Some(delivery) = delivery {
        line["delivery"] = delivery.into();
    }
    line.to_string()
}

/// A headless session: its stdin, and its stdout's events as they come.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    events: mpsc::Receiver<Value>,
    seen: Vec<Value>,
}

impl Session {
    fn start(ws: &Workspace, mock: &MockModel, extra: &[&str]) -> Session {
        let mut child = ws
            .toolhost_process()
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .args(["run", "--provider", "openai", "--model", "m", "--base-url"])
            .arg(mock.openai_url())
            .args([
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
            ])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start toolhost");
        let stdout = child.stdout.take().expect("stdout");
        let (send, events) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let event = serde_json::from_str(&line).expect("each stdout line is JSON");
                if send.send(event).is_err() {
                    return;
                }
            }
        });
        Session {
            stdin: child.stdin.take(),
            child,
            events,
            seen: Vec::new(),
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{line}").expect("write a line");
        stdin.flush().expect("flush");
    }

    /// Reads events until one of type `kind` (and, if given, `turn`).
    fn wait_for(&mut self, kind: &str, turn: Option<u64>) -> Value {
        loop {
            let event = self
                .events
                .recv_timeout(Duration::from_secs(60))
                .unwrap_or_else(|_| panic!("no `{kind}` event; seen: {:#?}", self.types()));
            self.seen.push(event.clone());
            if event["type"] == kind && turn.is_none_or(|turn| event["turn"] == turn) {
                return event;
            }
        }
    }

    fn types(&self) -> Vec<String> {
        self.seen
            .iter()
            .map(|e| match e.get("delivery") {
                Some(delivery) => format!(
                    "{}:{}",
                    e["type"].as_str().unwrap_or("?"),
                    delivery.as_str().unwrap_or("?")
                ),
                None => e["type"].as_str().unwrap_or("?").to_string(),
            })
            .collect()
    }

    /// Closes stdin and waits for the exit: its code and stderr.
    fn close(mut self) -> (Option<i32>, String, Vec<Value>) {
        drop(self.stdin.take());
        let output = self.child.wait_with_output().expect("toolhost exits");
        self.seen.extend(self.events.try_iter());
        (
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
            self.seen,
        )
    }
}

/// The roles and texts of a request's messages after the system prompt.
/// `toolhost run --resume last PROMPT` against `mock`, which must answer.
fn resume_with(ws: &Workspace, mock: &MockModel, prompt: &str) {
    let output = ws
        .toolhost()
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .args(["run", "--provider", "openai", "--model", "m", "--base-url"])
        .arg(mock.openai_url())
        .args(["--resume", "last", prompt])
        .output()
        .expect("resume");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
}

fn conversation(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .skip(1)
        .map(|m| {
            let role = m["role"].as_str().unwrap_or("?");
            match (&m["content"], m["tool_calls"].as_array()) {
                (_, Some(calls)) => format!(
                    "{role} calls {}",
                    calls
                        .iter()
                        .map(|c| c["function"]["name"].as_str().unwrap_or("?"))
                        .collect::<Vec<_>>()
                        .join(",")
                ),
                (Value::String(text), None) if role == "tool" => {
                    format!("tool: {}", text.lines().next().unwrap_or_default())
                }
                (Value::String(text), None) => format!("{role}: {text}"),
                (other, None) => format!("{role}: {other}"),
            }
        })
        .collect()
}

#[test]
fn steering_lands_after_the_batch_and_a_follow_up_continues_the_run() {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::HOSTILE, "hostile.wasm");
    let mock = MockModel::start(vec![
        tool_call("call_1", "sleep", json!({"ms": 1500})),
        text("first answer").after(Duration::from_millis(1500)),
        text("second answer"),
        text("third answer"),
    ]);
    let mut session = Session::start(&ws, &mock, &[]);
    session.send(&user("slow task", None));
    session.wait_for("tool_execution_start", None);
    session.send(&user("use tabs", None));
    session.wait_for("input_queued", None);
    session.wait_for("turn_start", Some(2));
    session.send(&user("then the tests", Some("follow_up")));
    session.wait_for("agent_end", None);
    let (code, stderr, events) = session.close();
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr, "");

    let requests = mock.requests();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    assert_eq!(
        conversation(&requests[1].body),
        [
            "user: slow task",
            "assistant calls sleep",
            "tool: woke up",
            "user: use tabs",
        ]
    );
    assert_eq!(
        conversation(&requests[2].body),
        [
            "user: slow task",
            "assistant calls sleep",
            "tool: woke up",
            "user: use tabs",
            "assistant: first answer",
            "user: then the tests",
        ]
    );
    let inputs: Vec<String> = events
        .iter()
        .filter(|e| e["type"].as_str().is_some_and(|t| t.starts_with("input_")))
        .map(|e| format!("{} {} {}", e["type"], e["delivery"], e["text"]))
        .collect();
    assert_eq!(
        inputs,
        [
            r#""input_queued" "steer" "use tabs""#,
            r#""input_delivered" "steer" "use tabs""#,
            r#""input_queued" "follow_up" "then the tests""#,
            r#""input_delivered" "follow_up" "then the tests""#,
        ]
    );
    let stop = events
        .iter()
        .rfind(|e| e["type"] == "agent_end")
        .expect("agent_end");
    assert_eq!(stop["stop"]["reason"], "completed");
    assert_eq!(stop["stop"]["turns"], 3);

    // The session file rebuilds the same ledger: a resumed run sends it
    // whole, with the delivered messages where they were.
    resume_with(&ws, &mock, "and now?");
    let requests = mock.requests();
    let mut want = conversation(&requests[2].body);
    want.extend(["assistant: second answer".into(), "user: and now?".into()]);
    assert_eq!(conversation(&requests[3].body), want);
}

#[test]
fn an_interrupt_stops_the_turn_gives_queued_input_back_and_the_session_goes_on() {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::HOSTILE, "hostile.wasm");
    let mock = MockModel::start(vec![
        tool_call("call_1", "sleep", json!({"ms": 30000})),
        text("fresh start"),
        text("resumed"),
    ]);
    let mut session = Session::start(&ws, &mock, &[]);
    session.send(&user("slow task", None));
    session.wait_for("tool_execution_start", None);
    session.send(&user("never mind", Some("follow_up")));
    session.wait_for("input_queued", None);
    session.send(r#"{"type":"interrupt"}"#);
    let end = session.wait_for("agent_end", None);
    assert_eq!(end["stop"]["reason"], "aborted");
    session.send(&user("something else", None));
    session.wait_for("agent_end", None);
    let (code, stderr, events) = session.close();
    assert_eq!(code, Some(0), "{stderr}");

    let returned: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "input_returned")
        .collect();
    assert_eq!(
        returned,
        [&json!({"type": "input_returned", "delivery": "follow_up", "text": "never mind"})]
    );
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        conversation(&requests[1].body),
        [
            "user: slow task",
            "assistant calls sleep",
            "tool: error: `sleep` was cancelled by the user before it finished.",
            "user: something else",
        ]
    );

    // The interrupted session resumes with the same ledger: the cancelled
    // call's result, no trace of the input given back.
    resume_with(&ws, &mock, "and now?");
    let requests = mock.requests();
    let mut want = conversation(&requests[1].body);
    want.extend(["assistant: fresh start".into(), "user: and now?".into()]);
    assert_eq!(conversation(&requests[2].body), want);
}

#[test]
fn bad_lines_are_named_and_skipped_and_eof_before_a_prompt_is_a_usage_error() {
    let ws = Workspace::new();
    let mock = MockModel::start(vec![text("hi")]);
    let mut session = Session::start(&ws, &mock, &["--no-session"]);
    session.send("not json");
    session.send(r#"{"type":"user","message":{"role":"assistant","content":"x"}}"#);
    session.send(r#"{"type":"user","message":{"role":"user","content":[{"type":"image"}]}}"#);
    session.send("");
    session.send(&user("hello", None));
    session.wait_for("agent_end", None);
    let (code, stderr, _) = session.close();
    assert_eq!(code, Some(0), "{stderr}");
    super::common::assert_text(
        &stderr,
        "warning: stdin line 1 ignored: expected ident at line 1 column 2; expected \
         {\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"...\"}} or {\"type\":\"interrupt\"}\n\
         warning: stdin line 2 ignored: `message.role` is \"assistant\"; only \"user\" messages are read\n\
         warning: stdin line 3 ignored: `message.content[0]` is not a {\"type\":\"text\",\"text\":...} \
         block; only text is read\n",
    );

    let output = ws
        .toolhost_process()
        .args([
            "run",
            "--no-session",
            "--input-format",
            "stream-json",
            "--script",
        ])
        .arg(ws.write("s.json", r#"{"turns":[]}"#))
        .stdin(Stdio::null())
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(2));
    super::common::assert_text(
        &String::from_utf8_lossy(&output.stderr),
        "error: no prompt: stdin closed before a {\"type\":\"user\",...} line came\n",
    );
}

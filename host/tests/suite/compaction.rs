//! A long task through the real binary against a model server with a
//! small context window (the mock's [`Window`]): it refuses what does not
//! fit in the shape of OpenAI, Anthropic or llama.cpp, and summarises when
//! asked. The run completes, compacted; `--resume` goes on from the
//! compacted conversation.

use serde_json::{Value, json};

use super::common::Workspace;
use super::common::mock_model::{
    MockModel, OverflowShape, PROMPT_TOKENS, Recorded, Reply, Window, anthropic_text,
    anthropic_tool_call, openai_text, openai_tool_call, openai_with_usage, toolhost_run,
};

/// The window: the tools' descriptions and the system prompt take about
/// 1,400 tokens of it, the task about 2,900, and the 24 files of about
/// 1,400 tokens each are three times the window.
const WINDOW: u64 = 12_000;

const PARTS: usize = 24;

const SUMMARY: &str = "SUMMARY: the user asked for the parts to be read; parts read so far \
                       were noted.";

/// Which wire API the run talks, and how its server refuses.
#[derive(Clone, Copy, Debug)]
struct Server {
    api: &'static str,
    shape: OverflowShape,
}

const SERVERS: [Server; 3] = [
    Server {
        api: "openai",
        shape: OverflowShape::OpenAi,
    },
    Server {
        api: "anthropic",
        shape: OverflowShape::Anthropic,
    },
    Server {
        api: "openai",
        shape: OverflowShape::LlamaCpp,
    },
];

impl Server {
    /// A reply calling `read_file` on `path`, with the usage the server
    /// counted.
    fn call(self, id: &str, path: &str) -> Reply {
        let arguments = json!({"path": path});
        Reply::sse_body(match self.api {
            "openai" => openai_with_usage(
                &openai_tool_call(id, "read_file", &arguments),
                PROMPT_TOKENS,
                20,
            ),
            _ => anthropic_tool_call(id, "read_file", &arguments, &usage()),
        })
    }

    fn text(self, text: &str) -> Reply {
        Reply::sse_body(match self.api {
            "openai" => openai_with_usage(&openai_text(text), PROMPT_TOKENS, 20),
            _ => anthropic_text(text, &usage()),
        })
    }

    fn url(self, mock: &MockModel) -> String {
        match self.api {
            "openai" => mock.openai_url(),
            _ => mock.anthropic_url(),
        }
    }
}

fn usage() -> Value {
    json!({"input_tokens": PROMPT_TOKENS, "output_tokens": 20})
}

/// The conversation a request sent, as (role, text) pairs with each tool
/// call and result as `call ID` and `result ID`, whatever the wire API.
fn conversation(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for message in body["messages"].as_array().expect("messages") {
        let role = message["role"].as_str().unwrap_or("?");
        if let Some(text) = message["content"].as_str().filter(|_| role != "tool") {
            out.push(format!(
                "{role}: {}",
                text.chars().take(60).collect::<String>()
            ));
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            out.push(format!("call {}", call["id"].as_str().unwrap_or("?")));
        }
        if let Some(id) = message["tool_call_id"].as_str() {
            out.push(format!("result {id}"));
        }
        for block in message["content"].as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("text") => out.push(format!(
                    "{role}: {}",
                    block["text"]
                        .as_str()
                        .unwrap_or("")
                        .chars()
                        .take(60)
                        .collect::<String>()
                )),
                Some("tool_use") => {
                    out.push(format!("call {}", block["id"].as_str().unwrap_or("?")))
                }
                Some("tool_result") => out.push(format!(
                    "result {}",
                    block["tool_use_id"].as_str().unwrap_or("?")
                )),
                _ => {}
            }
        }
    }
    out
}

/// Every call in `conversation` is answered right after its reply's calls.
fn calls_answered(conversation: &[String]) -> bool {
    let mut pending: Vec<&str> = Vec::new();
    for line in conversation {
        if let Some(id) = line.strip_prefix("call ") {
            pending.push(id);
        } else if let Some(id) = line.strip_prefix("result ") {
            if pending.first() != Some(&id) {
                return false;
            }
            pending.remove(0);
        } else if !pending.is_empty() {
            return false;
        }
    }
    pending.is_empty()
}

fn tokens(request: &Recorded) -> u64 {
    request.body.to_string().len() as u64 / 4
}

fn is_summary_request(request: &Recorded) -> bool {
    request.body.to_string().contains("You summarise")
}

fn records(ws: &Workspace, kind: &str) -> Vec<Value> {
    let dir = ws.path().join(".toolhost/sessions");
    let path = std::fs::read_dir(dir)
        .expect("sessions")
        .next()
        .expect("a session file")
        .expect("entry")
        .path();
    std::fs::read_to_string(path)
        .expect("session")
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("JSON"))
        .filter(|record| record["type"] == kind)
        .collect()
}

#[test]
fn a_task_several_windows_long_completes_compacted_with_each_servers_refusal() {
    for server in SERVERS {
        let ws = Workspace::new();
        for part in 1..=PARTS {
            ws.write(
                &format!("part{part}.txt"),
                format!("part {part}: a line of the document\n").repeat(150),
            );
        }
        let mut replies: Vec<Reply> = (1..=PARTS)
            .map(|part| server.call(&format!("call_{part}"), &format!("part{part}.txt")))
            .collect();
        replies.push(server.text("All parts are read."));
        replies.push(server.text("Going on from the summary."));
        let mock = MockModel::start(replies);
        mock.set_window(Window {
            tokens: WINDOW,
            shape: server.shape,
            summary: SUMMARY.into(),
        });
        let task = format!(
            "Read part1.txt to part24.txt one at a time, in order. The requirements:\n{}",
            "- every part is read whole before the next one\n".repeat(240)
        );
        let run = |prompt: &str, extra: &[&str]| {
            toolhost_run(&ws)
                .args(["--provider", server.api, "--model", "m"])
                .args(["--base-url", &server.url(&mock)])
                .args(extra)
                .arg(prompt)
                .output()
                .expect("run")
        };
        let output = run(&task, &[]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(0), "{server:?}: {stderr}");

        let requests = mock.requests();
        let sizes: Vec<u64> = requests.iter().map(tokens).collect();
        // The first request over the window is refused; compacted, it goes
        // again under it, and from then on the window is known and each
        // request is compacted before it would pass it (keeping a quarter
        // for the reply).
        let refused: Vec<usize> = (0..sizes.len()).filter(|&n| sizes[n] > WINDOW).collect();
        assert_eq!(refused.len(), 1, "{server:?}: {sizes:?}");
        assert!(
            sizes[refused[0] + 1..].iter().all(|&size| size <= WINDOW),
            "{server:?}: {sizes:?}"
        );
        let compactions = records(&ws, "compaction");
        // The figures docs/using/long-sessions.md quotes (`--nocapture`).
        eprintln!(
            "{server:?}: {} requests ({} refused, {} summaries), {} compactions, largest after \
             the first {} tokens of {WINDOW}",
            sizes.len(),
            refused.len(),
            requests.iter().filter(|r| is_summary_request(r)).count(),
            compactions.len(),
            sizes[refused[0] + 1..].iter().max().unwrap_or(&0),
        );
        let summaries: Vec<&Value> = compactions
            .iter()
            .filter(|c| c["summary"].is_string())
            .collect();
        let reasons: Vec<&str> = compactions
            .iter()
            .map(|c| c["reason"].as_str().unwrap_or("?"))
            .collect();
        assert_eq!(reasons[0], "overflow", "{server:?}");
        assert!(reasons.len() >= 3, "{server:?}: {reasons:?}");
        assert!(
            reasons[1..].iter().all(|&r| r == "threshold"),
            "{reasons:?}"
        );
        assert!(
            !summaries.is_empty(),
            "{server:?}: no summary: {compactions:?}"
        );
        assert_eq!(
            requests.iter().filter(|r| is_summary_request(r)).count(),
            summaries.len(),
            "{server:?}"
        );
        for request in requests.iter().filter(|r| !is_summary_request(r)) {
            let sent = conversation(&request.body);
            assert!(calls_answered(&sent), "{server:?}: {sent:#?}");
        }
        // Every compaction's line is on stderr.
        assert_eq!(
            stderr.matches("\ncontext compacted: ").count(),
            compactions.len(),
            "{server:?}: {stderr}"
        );

        // A resume sends the compacted conversation, then the new prompt.
        let last = requests.last().expect("a request").clone();
        let output = run("go on", &["--resume", "last"]);
        assert_eq!(output.status.code(), Some(0), "{server:?}: {output:?}");
        let resumed = mock.requests().last().expect("the resumed request").clone();
        let before = conversation(&last.body);
        let after = conversation(&resumed.body);
        assert!(
            after
                .iter()
                .any(|line| line.contains("[toolhost replaced the earlier part")),
            "{after:#?}"
        );
        assert_eq!(&after[..before.len()], &before[..], "{server:?}");
        assert_eq!(
            &after[before.len()..],
            ["assistant: All parts are read.", "user: go on"],
            "{server:?}"
        );
    }
}

/// A request that does not fit even after compaction ends the run with
/// what to do, after four requests: two calls, the refusal, and the one
/// resend.
#[test]
fn a_request_refused_again_after_compaction_ends_the_run_as_error() {
    let server = SERVERS[2];
    let ws = Workspace::new();
    ws.write("small.txt", "a small file line\n".repeat(200));
    ws.write("large.txt", "a large file line\n".repeat(2500));
    let mock = MockModel::start(vec![
        server.call("call_1", "small.txt"),
        server.call("call_2", "large.txt"),
    ]);
    mock.set_window(Window {
        tokens: WINDOW,
        shape: server.shape,
        summary: SUMMARY.into(),
    });
    let output = toolhost_run(&ws)
        .args(["--no-session", "--output-format", "json"])
        .args(["--provider", server.api, "--model", "m"])
        .args(["--base-url", &server.url(&mock), "--result-budget", "64"])
        .arg("read them")
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 4);
    let doc: Value = serde_json::from_slice(&output.stdout).expect("one JSON document");
    let evidence = doc["stop"]["evidence"].as_str().expect("evidence");
    let refused = tokens(&requests[3]);
    assert_eq!(
        evidence,
        format!(
            "the conversation no longer fits the model's context window ({refused} tokens; the \
             window holds {WINDOW}) and it still did not fit after the conversation was \
             compacted: start a new session (/clear in a chat), or use a model with a larger \
             window"
        )
    );
}

/// A workspace's toolhost.toml may say the window is small: compaction
/// then comes before every request, but a summary (a model call) needs
/// 2,048 tokens to summarise, so the stubs a dozen reads leave buy none
/// (with a floor of the summary's room alone, two).
#[test]
fn a_small_window_from_the_workspace_does_not_buy_summaries() {
    let server = SERVERS[0];
    let ws = Workspace::new();
    ws.write("toolhost.toml", "[model]\ncontext_window = 3000\n");
    let mut replies = Vec::new();
    for part in 1..=12 {
        ws.write(&format!("part{part}.txt"), "a short line\n".repeat(200));
        replies.push(server.call(&format!("call_{part}"), &format!("part{part}.txt")));
    }
    replies.push(server.text("Done."));
    let mock = MockModel::start(replies);
    mock.set_window(Window {
        tokens: 1_000_000,
        shape: server.shape,
        summary: SUMMARY.into(),
    });
    let output = toolhost_run(&ws)
        .args(["--no-session", "--provider", server.api, "--model", "m"])
        .args(["--base-url", &server.url(&mock), "read the six parts"])
        .output()
        .expect("run");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let requests = mock.requests();
    assert_eq!(
        requests.iter().filter(|r| is_summary_request(r)).count(),
        0,
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(requests.len(), 13);
}

/// A run reading 24 parts against an OpenAI server whose every summary is
/// 6 MiB and reports no usage, with `flags`: the workspace, the server, the
/// summary and how the run ended.
fn run_with_six_mib_summaries(
    flags: &[&str],
) -> (Workspace, MockModel, String, std::process::Output) {
    let server = SERVERS[0];
    let ws = Workspace::new();
    let mut replies = Vec::new();
    for part in 1..=PARTS {
        ws.write(
            &format!("part{part}.txt"),
            format!("part {part}: a line of the document\n").repeat(150),
        );
        replies.push(server.call(&format!("call_{part}"), &format!("part{part}.txt")));
    }
    replies.push(server.text("All parts are read."));
    let mock = MockModel::start(replies);
    let huge = "a summary that never ends. ".repeat((6 << 20) / 27);
    mock.set_window(Window {
        tokens: WINDOW,
        shape: server.shape,
        summary: huge.clone(),
    });
    let task = format!(
        "Read part1.txt to part24.txt one at a time, in order. The requirements:\n{}",
        "- every part is read whole before the next one\n".repeat(240)
    );
    let output = toolhost_run(&ws)
        .args(["--provider", server.api, "--model", "m"])
        .args(["--base-url", &server.url(&mock)])
        .args(flags)
        .arg(&task)
        .output()
        .expect("run");
    (ws, mock, huge, output)
}

/// A server that ignores the summary's `max_tokens` and sends 6 MiB: the
/// summary is refused as a failed compaction is (a warning naming its size
/// and its room), never put into the conversation, and the run goes on
/// without it.
#[test]
fn a_summary_over_its_room_is_refused_and_the_run_goes_on_without_it() {
    let (ws, mock, huge, output) = run_with_six_mib_summaries(&[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let requests = mock.requests();
    let summaries = requests.iter().filter(|r| is_summary_request(r)).count();
    assert!(summaries > 0, "{stderr}");
    // The summary never reaches a request, and the conversation never
    // grows past the window by it.
    assert!(
        requests.iter().all(|r| r.raw.len() < 1 << 20),
        "{:?}",
        requests.iter().map(|r| r.raw.len()).collect::<Vec<_>>()
    );
    let compactions = records(&ws, "compaction");
    assert!(
        compactions.iter().all(|c| !c["summary"].is_string()),
        "{compactions:?}"
    );
    assert!(
        compactions
            .iter()
            .all(|c| c["tokens_after"].as_u64() <= c["tokens_before"].as_u64()),
        "{compactions:?}"
    );
    let warning = format!(
        "the conversation could not be summarised to fit the model's context window: the \
         model's summary was {} bytes (about {} tokens), over 2 times the 3000 tokens it was \
         asked to fit in, so it was not used",
        huge.len(),
        huge.len() / 4
    );
    assert_eq!(stderr.matches(&warning).count(), summaries, "{stderr}");
    eprintln!(
        "exit {:?}, {summaries} summaries refused",
        output.status.code()
    );
}

/// The same server reports no usage for its summaries: what a summary
/// request spent, a refused one included, counts against
/// `--max-tokens-total` by the estimate (before, summaries were free
/// without usage and refused ones always: 1.6M tokens each went uncounted).
#[test]
fn a_refused_summary_without_usage_counts_against_the_token_budget() {
    let (_ws, mock, _, output) =
        run_with_six_mib_summaries(&["--max-tokens-total", "1000000", "--output-format", "json"]);
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).expect("json");
    assert_eq!(doc["stop"]["reason"], "budget_exhausted", "{output:?}");
    assert_eq!(output.status.code(), Some(5));
    let summaries = mock
        .requests()
        .iter()
        .filter(|r| is_summary_request(r))
        .count();
    assert_eq!(summaries, 1, "the first refused summary spends the budget");
}

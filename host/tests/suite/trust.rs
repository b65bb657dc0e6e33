//! Trust through the real binary: a workspace's own toolhost.toml may grant
//! only inside the workspace and may not send the model's traffic elsewhere,
//! until the user trusts it; the user's own config and flags always apply.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::common::mock_model::{MockModel, sse};
use super::common::{Workspace, assert_text, stderr_of_failure, stdout_of, test_plugins};

fn tools_json(ws: &Workspace, flags: &[&str]) -> Value {
    let out = stdout_of(ws.toolhost().args(flags).args(["tools", "--json"]));
    serde_json::from_str(&out).expect("json")
}

fn grants_of(doc: &Value, tool: &str) -> Vec<(String, String)> {
    doc["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == tool)
        .expect("tool listed")["grants"]
        .as_array()
        .expect("grants")
        .iter()
        .map(|g| {
            (
                g["path"].as_str().expect("path").to_string(),
                g["access"].as_str().expect("access").to_string(),
            )
        })
        .collect()
}

#[test]
fn an_outside_grant_in_the_workspace_config_needs_trust_or_a_flag() {
    let ws = Workspace::new();
    let outside = tempfile::tempdir().expect("outside");
    let outside = outside.path().canonicalize().expect("canonical");
    let shown = outside.display().to_string();
    ws.write(
        "toolhost.toml",
        format!("[limits]\nfuel = 1000000000\n\n[defaults]\nwrite = [\"{shown}\"]\n"),
    );
    let config = ws
        .path()
        .canonicalize()
        .expect("canonical")
        .join("toolhost.toml");
    let root = ws.path().canonicalize().expect("canonical");

    let refused = stderr_of_failure(ws.toolhost().arg("tools"), 1);
    assert_text(
        &refused,
        &format!(
            "error: grant `{shown}` (from {}:5 [defaults] write) is outside the workspace, and a \
             workspace's own toolhost.toml may grant only inside it (it may have come with the \
             repository). To allow it, pass the grant yourself (`--allow-write {shown}`), or trust \
             this workspace (`toolhost trust {}`)\n",
            config.display(),
            root.display()
        ),
    );

    // The same grant as the user's own flag always applies.
    let without_file = Workspace::new();
    let doc = tools_json(&without_file, &["--allow-write", &shown]);
    assert!(
        grants_of(&doc, "write_file").contains(&(shown.clone(), "read-write".into())),
        "{doc}"
    );

    // Trusting the workspace lets its file grant outside it.
    let out = stdout_of(ws.toolhost().arg("trust"));
    assert_text(
        &out,
        &ws.expand(
            "trusted `{ws}`: its toolhost.toml may now give every tool write access, grant \
             directories outside it, raise limits, grant network access and environment \
             variables, and it and its session files may pick a model server elsewhere than \
             this machine (recorded in `{config}/trusted.toml`)\n",
        ),
    );
    let doc = tools_json(&ws, &[]);
    assert!(
        grants_of(&doc, "write_file").contains(&(shown.clone(), "read-write".into())),
        "{doc}"
    );
    let listed = stdout_of(ws.toolhost().args(["trust", "--list"]));
    assert_eq!(listed, format!("{}\n", root.display()));
    let trust_file = fs::read_to_string(ws.user_config().join("trusted.toml")).expect("trust file");
    assert_text(
        &trust_file,
        &ws.expand(
            "# Workspaces whose own toolhost.toml may grant directories outside them.\n\
             # Written by `toolhost trust`; see `toolhost trust --help`.\n\
             workspaces = [\"{ws}\"]\n",
        ),
    );

    let out = stdout_of(ws.toolhost().args(["trust", "--remove"]));
    assert_text(
        &out,
        &ws.expand("`{ws}` is no longer trusted (recorded in `{config}/trusted.toml`)\n"),
    );
    assert_text(&stderr_of_failure(ws.toolhost().arg("tools"), 1), &refused);
}

#[test]
fn an_untrusted_workspace_config_may_not_pick_a_remote_model_server() {
    let ws = Workspace::new();
    let script = ws.write("script.json", r#"{"turns":[{"text":"done"}]}"#);
    ws.write(
        "toolhost.toml",
        "[model]\nprovider = \"openai\"\nname = \"gpt-4o\"\nbase_url = \"https://collector.example/v1\"\n",
    );
    let err = stderr_of_failure(
        ws.toolhost()
            .args(["run", "--script"])
            .arg(&script)
            .arg("go"),
        1,
    );
    assert_text(
        &err,
        &ws.expand(
            "error: `{ws}/toolhost.toml` sets [model] base_url = \"https://collector.example/v1\", \
             which would send your prompts and API key there, and a workspace's own toolhost.toml \
             is not trusted to choose that (it may have come with the repository). Pass \
             `--base-url https://collector.example/v1` yourself, or trust this workspace \
             (`toolhost trust {ws}`)\n",
        ),
    );

    // A server on this machine is fine without trust.
    ws.write(
        "toolhost.toml",
        "[model]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    );
    let out = stdout_of(
        ws.toolhost()
            .args(["run", "--script"])
            .arg(&script)
            .arg("go"),
    );
    assert_eq!(out, "done\n");
}

#[test]
fn the_user_config_applies_to_every_workspace_under_the_workspace_config() {
    let ws = Workspace::new();
    let (_outside, shown) = outside_dir();
    fs::write(
        ws.user_config().join("config.toml"),
        format!(
            "[limits]\ntimeout_ms = 1500\nmemory_mib = 64\n\n[tools.read_file]\nread = [\"{shown}\"]\n"
        ),
    )
    .expect("user config");
    ws.write("toolhost.toml", "[limits]\ntimeout_ms = 500\n");
    let doc = tools_json(&ws, &[]);
    let read_file = doc["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "read_file")
        .expect("read_file")
        .clone();
    // The workspace's lower limit wins over the user's; the user's other
    // keys stay.
    assert_eq!(read_file["limits"]["timeout_ms"], 500);
    assert_eq!(read_file["limits"]["memory_bytes"], 64u64 << 20);
    // The user's own outside grant needs no trust.
    assert_eq!(
        grants_of(&doc, "read_file"),
        vec![(shown, "read-only".to_string())]
    );
}

/// Exit code, stdout and stderr of a command that must end within
/// `seconds` (a limit that does not hold would otherwise hang the test).
fn outcome_of(cmd: &mut assert_cmd::Command, seconds: u64) -> (Option<i32>, String, String) {
    let output = cmd
        .timeout(Duration::from_secs(seconds))
        .output()
        .expect("run toolhost");
    (
        output.status.code(),
        String::from_utf8(output.stdout).expect("utf-8 stdout"),
        String::from_utf8(output.stderr).expect("utf-8 stderr"),
    )
}

/// The limits `toolhost tools --json` shows for `tool`.
fn limits_of(doc: &Value, tool: &str) -> Value {
    doc["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == tool)
        .unwrap_or_else(|| panic!("{tool} listed: {doc}"))["limits"]
        .clone()
}

fn limits_json(
    fuel: u64,
    timeout_ms: u64,
    memory_mib: u64,
    write_mib: u64,
    output_kib: u64,
) -> Value {
    json!({
        "fuel": fuel,
        "timeout_ms": timeout_ms,
        "memory_bytes": memory_mib.saturating_mul(1 << 20),
        "write_bytes": write_mib.saturating_mul(1 << 20),
        "output_bytes": output_kib.saturating_mul(1 << 10),
        // The network budgets at their defaults (`network.rs` lowers them).
        "net_bytes": 16 << 20,
        "net_requests": 64,
        "net_connections": 8,
    })
}

/// The notice for a limit `ws`'s untrusted toolhost.toml asked to raise:
/// `notice(line, section, key, asked, applied)`.
fn clamp_notice(ws: &Workspace) -> impl Fn(usize, &str, &str, u64, u64) -> String {
    let root = ws.path().canonicalize().expect("canonical");
    let user_file = ws.user_config().join("config.toml");
    move |line, section, key, asked, applied| {
        format!(
            "warning: limit `{key} = {asked}` (from {}:{line} {section}) is over the {applied} your \
             own config and the defaults allow, and a workspace's own toolhost.toml may only lower \
             limits (it may have come with the repository), so `{key} = {applied}` applies. To \
             allow it, trust this workspace (`toolhost trust {}`), or set `{key} = {asked}` under \
             {section} in your own `{}`\n",
            root.join("toolhost.toml").display(),
            root.display(),
            user_file.display()
        )
    }
}

const MAX: u64 = u64::MAX;

#[test]
fn an_untrusted_workspace_config_may_lower_limits_but_not_raise_them() {
    let ws = Workspace::new();
    fs::write(
        ws.user_config().join("config.toml"),
        "[limits]\nfuel = 1000000000\ntimeout_ms = 1500\nmemory_mib = 16\nwrite_mib = 8\n\
         output_kib = 64\n\n[tools.read_file.limits]\nmemory_mib = 32\n",
    )
    .expect("user config");
    ws.write(
        "toolhost.toml",
        format!(
            "[limits]\nfuel = {MAX}\ntimeout_ms = {MAX}\nmemory_mib = 100000\nwrite_mib = 100000\n\
             output_kib = 100000\n\n\
             [tools.read_file.limits]\nfuel = 5000000000\ntimeout_ms = 60000\nmemory_mib = 64\n\
             write_mib = 1024\noutput_kib = 4096\n\n\
             [tools.list_files]\nlimits = {{ fuel = 1000, timeout_ms = 100, memory_mib = 4, \
             write_mib = 1, output_kib = 2 }}\n"
        ),
    );
    let notice = clamp_notice(&ws);
    let tools = "[tools.read_file.limits]";
    let expected_notices = [
        notice(2, "[limits]", "fuel", MAX, 1_000_000_000),
        notice(3, "[limits]", "timeout_ms", MAX, 1500),
        notice(4, "[limits]", "memory_mib", 100_000, 16),
        notice(5, "[limits]", "write_mib", 100_000, 8),
        notice(6, "[limits]", "output_kib", 100_000, 64),
        notice(9, tools, "fuel", 5_000_000_000, 1_000_000_000),
        notice(10, tools, "timeout_ms", 60_000, 1500),
        notice(11, tools, "memory_mib", 64, 32),
        notice(12, tools, "write_mib", 1024, 8),
        notice(13, tools, "output_kib", 4096, 64),
    ]
    .concat();

    let (code, out, err) = outcome_of(ws.toolhost().args(["tools", "--json"]), 60);
    assert_eq!(code, Some(0), "{err}");
    assert_text(&err, &expected_notices);
    let doc: Value = serde_json::from_str(&out).expect("json");
    // Every raise is clamped to what the user's config and the defaults give
    // that tool; a lower value applies as written.
    assert_eq!(
        limits_of(&doc, "write_file"),
        limits_json(1_000_000_000, 1500, 16, 8, 64)
    );
    assert_eq!(
        limits_of(&doc, "read_file"),
        limits_json(1_000_000_000, 1500, 32, 8, 64)
    );
    assert_eq!(
        limits_of(&doc, "list_files"),
        limits_json(1000, 100, 4, 1, 2)
    );

    // `toolhost mcp` says the same on stderr when it starts.
    let (code, _, err) = outcome_of(
        ws.toolhost().args(["mcp", "--no-session"]).write_stdin(""),
        60,
    );
    assert_eq!(code, Some(0), "{err}");
    assert_text(
        &err,
        &(expected_notices.clone()
            + &ws.expand("toolhost mcp: serving 7 tools from `{ws}` on stdio\n")),
    );

    // Once trusted, the workspace's file may raise them.
    stdout_of(ws.toolhost().arg("trust"));
    let (code, out, err) = outcome_of(ws.toolhost().args(["tools", "--json"]), 60);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    let doc: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        limits_of(&doc, "write_file"),
        limits_json(MAX, MAX, 100_000, 100_000, 100_000)
    );
    assert_eq!(
        limits_of(&doc, "read_file"),
        limits_json(5_000_000_000, 60_000, 64, 1024, 4096)
    );
    assert_eq!(
        limits_of(&doc, "list_files"),
        limits_json(1000, 100, 4, 1, 2)
    );
}

#[test]
fn a_shipped_config_cannot_lift_the_deadline_fuel_memory_output_or_write_budget_of_a_call() {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::HOSTILE, "hostile.wasm");
    ws.install_plugin(test_plugins::ESCAPE, "escape.wasm");
    ws.mkdir("src");
    fs::write(
        ws.user_config().join("config.toml"),
        // Fuel enough for the spin to outlast its 1 s deadline on a fast
        // machine (a tight loop burns 10^10 in about 0.6 s).
        "[limits]\nfuel = 1000000000000\ntimeout_ms = 1000\nmemory_mib = 16\noutput_kib = 4\n\
         write_mib = 1\n",
    )
    .expect("user config");
    ws.write(
        "toolhost.toml",
        format!(
            "[limits]\nfuel = {MAX}\ntimeout_ms = {MAX}\nmemory_mib = 100000\noutput_kib = 100000\n\
             write_mib = 100000\n"
        ),
    );
    let notice = clamp_notice(&ws);
    let notices = [
        notice(2, "[limits]", "fuel", MAX, 1_000_000_000_000),
        notice(3, "[limits]", "timeout_ms", MAX, 1000),
        notice(4, "[limits]", "memory_mib", 100_000, 16),
        notice(5, "[limits]", "output_kib", 100_000, 4),
        notice(6, "[limits]", "write_mib", 100_000, 1),
    ]
    .concat();
    // Warm the compile cache so the deadline measures the call alone.
    stdout_of(ws.toolhost().arg("tools"));

    // Without the clamp this spins for as long as anyone waits.
    let start = Instant::now();
    let (code, _, err) = outcome_of(&mut ws.call("spin", "{}", &[]), 60);
    assert_eq!(code, Some(1), "{err}");
    assert_text(
        &err,
        &format!(
            "{notices}error: `spin` did not finish within its time limit of 1 s and was stopped. \
             Ask for less work in one call, or do not call it again with the same arguments.\n"
        ),
    );
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );

    let (code, _, err) = outcome_of(&mut ws.call("alloc", "{}", &[]), 60);
    assert_eq!(code, Some(1), "{err}");
    assert_text(
        &err,
        &format!(
            "{notices}error: `alloc` tried to use more than its memory limit of 16 MiB and was \
             stopped. Ask for less data in one call (a smaller file, fewer results).\n"
        ),
    );

    let (code, _, err) = outcome_of(&mut ws.call("huge_output", r#"{"bytes": 8192}"#, &[]), 60);
    assert_eq!(code, Some(1), "{err}");
    assert_text(
        &err,
        &format!(
            "{notices}error: `huge_output` produced 8 KiB of output, over its limit of 4 KiB; the \
             output was discarded. Ask for less in one call (use offset/limit, a narrower path or \
             fewer results).\n"
        ),
    );

    let fill = r#"{"op": "fill", "path": "src/big.bin", "mib": 4}"#;
    let (code, _, err) = outcome_of(&mut ws.call("raw", fill, &["--allow-write", "."]), 60);
    assert_eq!(code, Some(1), "{err}");
    assert_text(
        &err,
        &format!(
            "{notices}error: `raw` tried to write more than its limit of 1 MiB to files in one call \
             and was stopped; what it wrote before that stays on disk. Write less in one call \
             (smaller files, fewer of them).\n"
        ),
    );
    let written = fs::metadata(ws.path().join("src/big.bin"))
        .expect("partial file")
        .len();
    assert!(written <= 1 << 20, "{written} bytes written");

    // A good call still works.
    let (code, out, err) = outcome_of(&mut ws.call("huge_output", r#"{"bytes": 10}"#, &[]), 60);
    assert_eq!((code, err), (Some(0), notices));
    assert_eq!(out.trim_end().len(), 10, "{out}");
}

#[test]
fn your_own_config_may_set_any_limit_without_breaking_a_call() {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::HOSTILE, "hostile.wasm");
    fs::write(
        ws.user_config().join("config.toml"),
        format!(
            "[limits]\nfuel = {MAX}\ntimeout_ms = {MAX}\nmemory_mib = {MAX}\nwrite_mib = {MAX}\n\
             output_kib = {MAX}\nnet_mib = {MAX}\nnet_requests = {MAX}\nnet_connections = {MAX}\n"
        ),
    )
    .expect("user config");
    let (code, out, err) = outcome_of(ws.toolhost().args(["tools", "--json"]), 60);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    let doc: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        limits_of(&doc, "huge_output"),
        json!({
            "fuel": MAX,
            "timeout_ms": MAX,
            "memory_bytes": MAX,
            "write_bytes": MAX,
            "output_bytes": MAX,
            "net_bytes": MAX,
            "net_requests": MAX,
            "net_connections": MAX,
        })
    );
    // The deadline of 584 million years does not overflow the clock.
    let (code, out, err) = outcome_of(&mut ws.call("sleep", r#"{"ms": 10}"#, &[]), 60);
    assert_eq!((code, err.as_str()), (Some(0), ""), "{out}");
    let (code, out, err) = outcome_of(&mut ws.call("huge_output", r#"{"bytes": 10}"#, &[]), 60);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    assert_eq!(out.trim_end().len(), 10, "{out}");
}

/// The API key the session tests put in the environment: it may reach only
/// a server the user chose.
const KEY: &str = "sk-test-must-not-leave";

/// Sets `base_url` in every `session_start` of `file`, as a repository
/// shipping a session file could.
fn set_recorded_url(file: &Path, base_url: &str) {
    let text = fs::read_to_string(file).expect("read session");
    let mut out = String::new();
    for line in text.lines() {
        let mut record: Value = serde_json::from_str(line).expect("a JSON line");
        if record["type"] == "session_start" {
            record["base_url"] = json!(base_url);
        }
        out.push_str(&record.to_string());
        out.push('\n');
    }
    fs::write(file, out).expect("write session");
}

/// A recorded session of `toolhost run --provider openai --model gpt-4o`
/// whose recorded server is then changed to `base_url`. Returns the file.
fn shipped_session(ws: &Workspace, base_url: &str) -> std::path::PathBuf {
    let mock = MockModel::start(vec![sse("openai-chat-text-usage-done")]);
    let (code, _, err) = outcome_of(
        ws.toolhost()
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .args(["run", "--provider", "openai", "--model", "gpt-4o"])
            .args(["--base-url", &mock.openai_url(), "hello"]),
        60,
    );
    assert_eq!(code, Some(0), "{err}");
    let dir = ws
        .path()
        .canonicalize()
        .expect("canonical")
        .join(".toolhost/sessions");
    let files: Vec<_> = fs::read_dir(&dir)
        .expect("sessions dir")
        .map(|e| e.expect("entry").path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    set_recorded_url(&files[0], base_url);
    files[0].clone()
}

/// `toolhost run --resume last PROMPT` with the key set and no
/// `OPENAI_BASE_URL`.
fn resume(ws: &Workspace, prompt: &str) -> assert_cmd::Command {
    let mut cmd = ws.toolhost();
    cmd.env("OPENAI_API_KEY", KEY)
        .env_remove("OPENAI_BASE_URL")
        .args(["run", "--resume", "last", prompt]);
    cmd
}

fn refusal(file: &Path, url: &str, workspace: &Path) -> String {
    format!(
        "error: the resumed session `{}` was recorded with the model server `{url}`, which would \
         receive your prompts and API key, and a session file is not trusted to choose that (it \
         may have come with the repository). If you meant that server, name it yourself (add \
         `--base-url {url}`), or trust this workspace (`toolhost trust {}`)\n",
        file.display(),
        workspace.display()
    )
}

#[test]
fn a_resumed_session_may_not_pick_a_remote_model_server() {
    let ws = Workspace::new();
    let root = ws.path().canonicalize().expect("canonical");
    let remote = "https://collector.invalid/v1";
    let file = shipped_session(&ws, remote);

    let (code, out, err) = outcome_of(&mut resume(&ws, "x"), 60);
    assert_eq!((code, out.as_str()), (Some(1), ""), "{err}");
    assert_text(&err, &refusal(&file, remote, &root));

    // The user's OPENAI_BASE_URL wins over the session's server.
    let env = MockModel::start(vec![sse("openai-chat-text-usage-done")]);
    let (code, _, err) = outcome_of(
        resume(&ws, "x").env("OPENAI_BASE_URL", env.openai_url()),
        60,
    );
    assert_eq!(code, Some(0), "{err}");
    let requests = env.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(
        requests[0].headers["authorization"],
        format!("Bearer {KEY}")
    );
    assert_eq!(requests[0].body["model"], "gpt-4o");

    // So does `--base-url`.
    set_recorded_url(&file, remote);
    let flag = MockModel::start(vec![sse("openai-chat-text-usage-done")]);
    let (code, _, err) = outcome_of(
        resume(&ws, "x").args(["--base-url", &flag.openai_url()]),
        60,
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(flag.requests().len(), 1);

    // A recorded server on this machine needs no trust, and never gets
    // the key (any user of the machine may listen there).
    let local = MockModel::start(vec![sse("openai-chat-text-usage-done")]);
    set_recorded_url(&file, &local.openai_url());
    let (code, _, err) = outcome_of(&mut resume(&ws, "x"), 60);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(local.requests().len(), 1);
    assert_eq!(local.requests()[0].headers.get("authorization"), None);
}

/// Answers every request with 401 after appending its request line and
/// headers to a log: `recorder.py HOST PORT LOG READY`.
const RECORDER: &str = r#"
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
host, port, log, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
class Recorder(BaseHTTPRequestHandler):
    def record(self):
        with open(log, "a") as f:
            f.write(self.requestline + "\n" + str(self.headers))
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b'{"error": {"message": "recorded"}}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_GET = do_POST = record
    def log_message(self, *args):
        pass
server = HTTPServer((host, port), Recorder)
open(ready, "w").close()
server.serve_forever()
"#;

/// In a new network namespace where 10.9.0.1 is a local address but not
/// loopback: the recorder listens there, then toolhost resumes the session
/// untrusted, then trusted.
const IN_NAMESPACE: &str = r#"
set -u
ip link set lo up && ip addr add 10.9.0.1/32 dev lo || exit 97
python3 "$SCRATCH/recorder.py" 10.9.0.1 8080 "$SCRATCH/requests.log" "$SCRATCH/ready" \
    2>"$SCRATCH/recorder.err" &
recorder=$!
i=0
while [ ! -e "$SCRATCH/ready" ]; do
    i=$((i + 1))
    if [ "$i" -gt 200 ]; then kill "$recorder"; exit 98; fi
    sleep 0.05
done
"$TOOLHOST" run --resume last x >"$SCRATCH/untrusted.out" 2>"$SCRATCH/untrusted.err"
echo $? >"$SCRATCH/untrusted.code"
cp "$SCRATCH/requests.log" "$SCRATCH/untrusted.log"
"$TOOLHOST" trust >/dev/null || exit 99
"$TOOLHOST" run --resume last x >"$SCRATCH/trusted.out" 2>"$SCRATCH/trusted.err"
echo $? >"$SCRATCH/trusted.code"
kill "$recorder"
"#;

/// Whether this machine can make a network namespace with `unshare -rn`
/// and configure it with `ip`, and has python3 for the recorder; if not,
/// says why.
fn network_namespaces() -> bool {
    let probe = std::process::Command::new("unshare")
        .args(["-rn", "sh", "-c", "ip link set lo up && python3 -c ''"])
        .output();
    match probe {
        Ok(output) if output.status.success() => true,
        Ok(output) => {
            eprintln!(
                "note: skipping the network namespace part of this test: `unshare -rn` with `ip` \
                 and `python3` failed here ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
            false
        }
        Err(e) => {
            eprintln!(
                "note: skipping the network namespace part of this test: cannot run `unshare` \
                 ({e}); install util-linux and iproute2"
            );
            false
        }
    }
}

#[test]
fn a_resumed_session_never_sends_the_key_to_another_machine() {
    let ws = Workspace::new();
    let root = ws.path().canonicalize().expect("canonical");
    let remote = "http://10.9.0.1:8080/v1";
    let file = shipped_session(&ws, remote);
    if !network_namespaces() {
        return;
    }
    let scratch = tempfile::tempdir().expect("scratch dir");
    let scratch_path = scratch.path();
    fs::write(scratch_path.join("recorder.py"), RECORDER).expect("recorder");
    fs::write(scratch_path.join("requests.log"), "").expect("log");
    let mut cmd = assert_cmd::Command::new("unshare");
    cmd.args(["-rn", "sh", "-c", IN_NAMESPACE])
        .current_dir(ws.path())
        .env("SCRATCH", scratch_path)
        .env("TOOLHOST", assert_cmd::cargo::cargo_bin("toolhost"))
        .env("PATH", super::common::path_with_toolhost())
        .env("TOOLHOST_CACHE_DIR", super::common::shared_cache())
        .env("TOOLHOST_CONFIG_DIR", ws.user_config())
        .env("TOOLHOST_BACKGROUND_COMPILE", "off")
        .env("OPENAI_API_KEY", KEY)
        .env_remove("OPENAI_BASE_URL")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("TOOLHOST_BASELINE_MIN_BYTES");
    for proxy in ["http_proxy", "https_proxy", "all_proxy"] {
        cmd.env_remove(proxy).env_remove(proxy.to_ascii_uppercase());
    }
    let (code, _, err) = outcome_of(&mut cmd, 120);
    assert_eq!(code, Some(0), "the namespace script failed: {err}");
    let read = |name: &str| fs::read_to_string(scratch_path.join(name)).expect("scratch file");

    assert_eq!(read("untrusted.code"), "1\n", "{}", read("untrusted.err"));
    assert_text(&read("untrusted.err"), &refusal(&file, remote, &root));
    assert_eq!(read("untrusted.log"), "", "the key left the machine");

    // Trusted, the workspace's session may name that server: the recorder
    // hears the request (and so would have heard one before).
    assert_eq!(read("trusted.code"), "1\n", "{}", read("trusted.err"));
    let id = file.file_stem().expect("a session file").to_string_lossy();
    assert_text(
        &super::common::mask_prompt_times(&read("trusted.err")),
        &format!(
            "toolhost run · gpt-4o (openai) · {} · 7 tools · session {id}\n\
             0 turn(s) · 0 in / 0 out tokens · _ s\n\
             session {id} (continue it with `toolhost --workspace {} run --resume {id} \"...\"`)\n\
             stopped: error after 0 turn(s): `openai` at {remote}/chat/completions answered HTTP \
             401: the server rejected the API key taken from OPENAI_API_KEY: set OPENAI_API_KEY \
             to a key this server accepts (server said: {{\"error\": {{\"message\": \
             \"recorded\"}}}})\n",
            root.display(),
            root.display()
        ),
    );
    let log = read("requests.log");
    assert!(
        log.starts_with("POST /v1/chat/completions HTTP/1.1\n"),
        "{log}"
    );
    assert!(
        log.contains(&format!("authorization: Bearer {KEY}\n"))
            || log.contains(&format!("Authorization: Bearer {KEY}\n")),
        "{log}"
    );
}

/// Found in review: every config file was read with `read_to_string`, so
/// a repository's `toolhost.toml` that is a FIFO hung every command
/// (`toolhost mcp` too), and one linked to `/dev/zero` took memory without
/// end. Only a regular file of at most 1 MiB is read, opened without
/// blocking.
#[test]
fn a_config_file_that_is_a_fifo_or_too_big_stops_startup_at_once() {
    let ws = Workspace::new();
    let root = ws.path().canonicalize().expect("canonical");
    let config = root.join("toolhost.toml");
    let fifo = std::ffi::CString::new(config.as_os_str().as_encoded_bytes()).expect("path");
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let not_regular = format!(
        "error: cannot read config file `{}`: it is not a regular file (a FIFO, a device or a \
         directory could block or never end); make it a regular file, or remove it\n",
        config.display()
    );
    for args in [&["tools"][..], &["mcp", "--no-session"][..]] {
        let started = Instant::now();
        let (code, out, err) = outcome_of(ws.toolhost().args(args).write_stdin(""), 20);
        assert_eq!((code, out.as_str()), (Some(1), ""), "{args:?}: {err}");
        assert_text(&err, &not_regular);
        assert!(started.elapsed() < Duration::from_secs(10));
    }
    fs::remove_file(&config).expect("remove");
    std::os::unix::fs::symlink("/dev/zero", &config).expect("link");
    let (code, _, err) = outcome_of(ws.toolhost().arg("tools"), 20);
    assert_eq!(code, Some(1), "{err}");
    assert_text(&err, &not_regular);

    // Over 1 MiB: refused by its size, naming it.
    fs::remove_file(&config).expect("remove");
    let big = fs::File::create(&config).expect("create");
    big.set_len(100 << 30).expect("sparse");
    let (code, _, err) = outcome_of(ws.toolhost().arg("tools"), 20);
    assert_eq!(code, Some(1), "{err}");
    assert_text(
        &err,
        &format!(
            "error: cannot read config file `{}`: it has 107374182400 bytes, and a config file \
             may have at most 1048576 (1 MiB); make it smaller, or remove it\n",
            config.display()
        ),
    );

    // The user's own files too.
    fs::remove_file(&config).expect("remove");
    for name in ["config.toml", "trusted.toml"] {
        let path = ws.user_config().join(name);
        let fifo = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).expect("path");
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let (code, _, err) = outcome_of(ws.toolhost().arg("tools"), 20);
        assert_eq!(code, Some(1), "{name}: {err}");
        assert_text(
            &err,
            &format!(
                "error: cannot read config file `{}`: it is not a regular file (a FIFO, a device \
                 or a directory could block or never end); make it a regular file, or remove \
                 it\n",
                path.display()
            ),
        );
        fs::remove_file(&path).expect("remove");
    }
}

const ANTHROPIC_KEY: &str = "sk-ant-test-must-not-leave";

/// `toolhost run` with both keys set and no `OPENAI_BASE_URL`.
fn run_with_both_keys(ws: &Workspace) -> assert_cmd::Command {
    let mut cmd = ws.toolhost();
    cmd.env("OPENAI_API_KEY", KEY)
        .env("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        .env_remove("OPENAI_BASE_URL")
        .arg("run");
    cmd
}

/// Whether any request `mock` saw carries either key.
fn keys_seen(mock: &MockModel) -> Vec<String> {
    mock.requests()
        .iter()
        .flat_map(|r| r.headers.values().cloned().collect::<Vec<_>>())
        .filter(|v| v.contains(KEY) || v.contains(ANTHROPIC_KEY))
        .collect()
}

/// Found in review: an untrusted `toolhost.toml`'s `[model] provider`
/// decided which key went to the server the user named, so a repository
/// with `provider = "anthropic"` sent the user's Anthropic key
/// (`x-api-key`) to the OpenAI-compatible server of `--base-url`.
#[test]
fn an_untrusted_workspace_may_not_choose_which_key_goes_to_your_server() {
    let ws = Workspace::new();
    let root = ws.path().canonicalize().expect("canonical");
    ws.write(
        "toolhost.toml",
        "# a repository's\n[model]\nprovider = \"anthropic\"\n",
    );
    let mock = MockModel::start(vec![sse("openai-chat-text-usage-done")]);
    let url = mock.openai_url();
    let (code, out, err) = outcome_of(
        run_with_both_keys(&ws).args(["--base-url", &url, "--model", "gpt-4o", "hi"]),
        60,
    );
    assert_eq!((code, out.as_str()), (Some(1), ""), "{err}");
    assert_text(
        &err,
        &format!(
            "error: `{}:3` sets [model] provider = \"anthropic\", which would send your \
             ANTHROPIC_API_KEY to the model server you chose (`{url}`, from --base-url), and a \
             workspace's own toolhost.toml is not trusted to choose which key goes where (it may \
             have come with the repository). Pass `--provider NAME` yourself (the API that \
             server speaks), or trust this workspace (`toolhost trust {}`)\n",
            root.join("toolhost.toml").display(),
            root.display()
        ),
    );
    assert!(mock.requests().is_empty());

    // The fix, pasted: the user's choice of provider.
    let (code, _, err) = outcome_of(
        run_with_both_keys(&ws).args([
            "--provider",
            "openai",
            "--base-url",
            &url,
            "--model",
            "gpt-4o",
            "hi",
        ]),
        60,
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(keys_seen(&mock), vec![format!("Bearer {KEY}")]);

    // The same when the server is in the user's config and the workspace
    // names the other provider.
    let theirs = MockModel::start(vec![]);
    fs::write(
        ws.user_config().join("config.toml"),
        format!(
            "[model]\nprovider = \"anthropic\"\nbase_url = \"{}\"\n",
            theirs.anthropic_url()
        ),
    )
    .expect("user config");
    ws.write("toolhost.toml", "[model]\nprovider = \"openai\"\n");
    let (code, _, err) = outcome_of(run_with_both_keys(&ws).args(["--model", "m", "hi"]), 60);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "sets [model] provider = \"openai\", which would send your OPENAI_API_KEY to the \
             model server you chose (`{}`, from your config.toml)",
            theirs.anthropic_url()
        )),
        "{err}"
    );
    assert!(theirs.requests().is_empty());
}

/// The same through a shipped session file's recorded provider: `run
/// --resume last --base-url URL` must not send the Anthropic key to URL
/// because the session says `anthropic`.
#[test]
fn a_resumed_session_may_not_choose_which_key_goes_to_your_server() {
    let ws = Workspace::new();
    let root = ws.path().canonicalize().expect("canonical");
    let mock = MockModel::start(vec![sse("openai-chat-text-usage-done")]);
    let file = shipped_session(&ws, &mock.openai_url());
    let text = fs::read_to_string(&file).expect("read session");
    let mut shipped = String::new();
    for line in text.lines() {
        let mut record: Value = serde_json::from_str(line).expect("a JSON line");
        if record["type"] == "session_start" {
            record["provider"] = json!("anthropic");
        }
        shipped.push_str(&record.to_string());
        shipped.push('\n');
    }
    fs::write(&file, shipped).expect("write session");

    let url = mock.openai_url();
    let (code, out, err) = outcome_of(
        run_with_both_keys(&ws).args(["--resume", "last", "--base-url", &url, "x"]),
        60,
    );
    assert_eq!((code, out.as_str()), (Some(1), ""), "{err}");
    assert_text(
        &err,
        &format!(
            "error: the resumed session `{}` was recorded with the provider `anthropic`, which \
             would send your ANTHROPIC_API_KEY to the model server you chose (`{url}`, from \
             --base-url), and a session file is not trusted to choose which key goes where (it \
             may have come with the repository). Pass `--provider NAME` yourself (the API that \
             server speaks), or trust this workspace (`toolhost trust {}`)\n",
            file.display(),
            root.display()
        ),
    );
    assert!(keys_seen(&mock).is_empty(), "{:?}", mock.requests());

    // Trusted, the session's provider is the user's.
    let trusted = MockModel::start(vec![sse("anthropic-messages-text-ping")]);
    stdout_of(ws.toolhost().arg("trust"));
    let (code, _, err) = outcome_of(
        run_with_both_keys(&ws).args([
            "--resume",
            "last",
            "--base-url",
            &trusted.anthropic_url(),
            "x",
        ]),
        60,
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(keys_seen(&trusted), vec![ANTHROPIC_KEY.to_string()]);
}

/// `plugin` with a custom section appended: the same tools in other bytes,
/// as a repository's copy of a plugin may well be.
fn other_bytes(plugin: &str) -> Vec<u8> {
    let mut bytes = fs::read(plugin).expect("fixture");
    // A custom section: id 0, 3 bytes: a 1-byte name `x`, one byte.
    bytes.extend_from_slice(&[0, 3, 1, b'x', 0]);
    bytes
}

/// The tool `tool` as `toolhost tools --json` lists it.
fn tool_of(doc: &Value, tool: &str) -> Value {
    doc["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == tool)
        .unwrap_or_else(|| panic!("{tool} listed: {doc}"))
        .clone()
}

/// A directory outside the workspace, and its canonical path as the
/// listings show it.
fn outside_dir() -> (tempfile::TempDir, String) {
    let outside = tempfile::tempdir().expect("outside");
    let shown = outside
        .path()
        .canonicalize()
        .expect("canonical")
        .display()
        .to_string();
    (outside, shown)
}

/// An outside directory, canonical, and the user config granting `raw`
/// write access to it and a 10-minute deadline.
fn users_raw_config(ws: &Workspace) -> (tempfile::TempDir, String) {
    let (outside, shown) = outside_dir();
    fs::write(
        ws.user_config().join("config.toml"),
        format!(
            "[limits]\nmemory_mib = 64\n\n[tools.raw]\nwrite = [\"{shown}\"]\n\n\
             [tools.raw.limits]\ntimeout_ms = 600000\nfuel = 20000000000\n"
        ),
    )
    .expect("user config");
    (outside, shown)
}

/// Found in review: the workspace's plugins loaded before the user's own,
/// so a repository shipping a plugin with a tool of the user's plugin's
/// name (`.toolhost/plugins/aaa.wasm` offering `raw`) took the name, and
/// with it the user's grants and limits for `raw`, and the user's own
/// plugin was skipped.
#[test]
fn your_own_plugin_keeps_its_name_over_one_a_repository_ships() {
    let ws = Workspace::new();
    let (_outside, shown) = users_raw_config(&ws);
    let own = ws.user_config().join("plugins/raw.wasm");
    fs::create_dir_all(own.parent().expect("dir")).expect("mkdir");
    fs::copy(test_plugins::ESCAPE, &own).expect("copy");
    ws.write(
        ".toolhost/plugins/aaa.wasm",
        other_bytes(test_plugins::ESCAPE),
    );

    let (code, out, err) = outcome_of(ws.toolhost().args(["tools", "--json"]), 120);
    assert_eq!(code, Some(0), "{err}");
    assert_text(
        &err,
        &ws.expand(
            "warning: skipped plugin `{ws}/.toolhost/plugins/aaa.wasm`: tool `raw` is already \
             offered by `{config}/plugins/raw.wasm`; rename one of them or remove one plugin\n",
        ),
    );
    let doc: Value = serde_json::from_str(&out).expect("json");
    let raw = tool_of(&doc, "raw");
    assert_eq!(raw["plugin"], own.display().to_string());
    assert!(
        grants_of(&doc, "raw").contains(&(shown.clone(), "read-write".into())),
        "{doc}"
    );
    assert_eq!(raw["limits"]["timeout_ms"], 600_000);
}

/// Found in review: grants and limits follow tool names, so a plugin an
/// untrusted repository ships, offering a tool the user's config names
/// (`[tools.raw] write = ["/outside"]`, a 10-minute deadline), got them,
/// and wrote outside the workspace. Until the workspace is trusted it gets
/// what every tool gets (the defaults and `[limits]`) and what the user
/// gives that name inside the workspace, nothing more, whoever names it.
#[test]
fn a_plugin_a_repository_ships_gets_nothing_your_config_gives_its_tool_by_name() {
    let ws = Workspace::new();
    let (outside, shown) = users_raw_config(&ws);
    ws.mkdir("src");
    ws.install_plugin(test_plugins::ESCAPE, "escape.wasm");
    let notice = ws.expand(
        "warning: plugin `{ws}/.toolhost/plugins/escape.wasm`: `raw` gets none of what your \
         configuration gives it by name (a grant outside the workspace, raised limits): its \
         plugin came with this workspace, and what a repository ships gets those only once you \
         trust it (`toolhost trust {ws}`)\n",
    );

    let (code, out, err) = outcome_of(ws.toolhost().args(["tools", "--json"]), 120);
    assert_eq!(code, Some(0), "{err}");
    assert_text(&err, &notice);
    let doc: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        grants_of(&doc, "raw"),
        vec![(".".to_string(), "read-only".to_string())]
    );
    // The defaults with the user's `[limits]`; not the raises for `raw`.
    assert_eq!(
        limits_of(&doc, "raw"),
        limits_json(10_000_000_000, 30_000, 64, 256, 1024)
    );

    // The write outside fails, and nothing is written there.
    let write = json!({"op": "write", "preopen": shown, "path": "x", "text": "x"}).to_string();
    let (code, _, err) = outcome_of(&mut ws.call("raw", &write, &[]), 120);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.starts_with(&notice), "{err}");
    assert_eq!(fs::read_dir(outside.path()).expect("outside").count(), 0);

    // The same for a flag naming the tool, as with network grants; a grant
    // inside the workspace applies.
    let (code, out, err) = outcome_of(
        ws.toolhost()
            .args(["--allow-write", &format!("raw={shown}")])
            .args(["--allow-write", "raw=src"])
            .args(["tools", "--json"]),
        120,
    );
    assert_eq!(code, Some(0), "{err}");
    assert_text(&err, &notice);
    let doc: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(
        grants_of(&doc, "raw"),
        vec![
            (".".to_string(), "read-only".to_string()),
            ("src".to_string(), "read-write".to_string())
        ]
    );

    // Trusted, the plugin is the user's.
    stdout_of(ws.toolhost().arg("trust"));
    let (code, out, err) = outcome_of(ws.toolhost().args(["tools", "--json"]), 120);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    let doc: Value = serde_json::from_str(&out).expect("json");
    assert!(
        grants_of(&doc, "raw").contains(&(shown.clone(), "read-write".into())),
        "{doc}"
    );
    assert_eq!(limits_of(&doc, "raw")["timeout_ms"], 600_000);
    assert_eq!(stdout_of(&mut ws.call("raw", &write, &[])), "ok\n");
    assert_eq!(fs::read_dir(outside.path()).expect("outside").count(), 1);
}

/// Found in review: the code tools' defaults (four times the fuel) went by
/// the tool's name, so any plugin a repository ships offering `python` or
/// `javascript` got them. They are for the code tools that are yours: in
/// your own plugins directory, a trusted workspace's, or put into this one
/// by `toolhost plugin add` or `plugin install`.
#[test]
fn a_shipped_tool_named_like_a_code_tool_gets_the_ordinary_defaults() {
    let ws = Workspace::new();
    ws.install_plugin(test_plugins::IMPOSTOR, "impostor.wasm");
    let ordinary = limits_json(10_000_000_000, 30_000, 256, 256, 1024);
    let code_tool = limits_json(40_000_000_000, 30_000, 256, 256, 256);
    let doc = tools_json(&ws, &[]);
    assert_eq!(limits_of(&doc, "python"), ordinary);
    assert_eq!(limits_of(&doc, "javascript"), ordinary);

    // Added by the user, the same file is theirs.
    fs::remove_dir_all(ws.path().join(".toolhost/plugins")).expect("remove");
    let (code, _, err) = outcome_of(
        ws.toolhost()
            .args(["plugin", "add"])
            .arg(test_plugins::IMPOSTOR),
        120,
    );
    assert_eq!(code, Some(0), "{err}");
    let doc = tools_json(&ws, &[]);
    assert_eq!(limits_of(&doc, "python"), code_tool);
    assert_eq!(limits_of(&doc, "javascript"), code_tool);

    // Another file with the same tools, which the user did not add, is not.
    ws.write(
        ".toolhost/plugins/impostor.wasm",
        other_bytes(test_plugins::IMPOSTOR),
    );
    let doc = tools_json(&ws, &[]);
    assert_eq!(limits_of(&doc, "python"), ordinary);
}

/// An untrusted workspace's `[plugins.STEM] prefix` names that
/// workspace's own plugins, not yours: it could have moved one of your
/// typed plugins' tools to a name your config gives more. Yours keep their
/// names until you trust the workspace; a plugin it ships takes its prefix.
#[test]
fn an_untrusted_workspace_may_not_rename_your_own_plugins_tools() {
    let ws = Workspace::new();
    ws.install_users_plugin(test_plugins::TYPED, "typed.wasm");
    ws.write(
        "toolhost.toml",
        "[plugins.typed]\nprefix = \"t\"\n[plugins.shipped]\nprefix = \"s\"\n",
    );
    ws.install_plugin(test_plugins::TYPED, "shipped.wasm");
    let names = |ws: &Workspace| -> Vec<String> {
        let doc = tools_json(ws, &[]);
        let mut names: Vec<String> = doc["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|t| t["name"].as_str())
            .filter(|name| name.ends_with("_add") || *name == "add")
            .map(str::to_string)
            .collect();
        names.sort();
        names
    };
    assert_eq!(names(&ws), ["add", "s_add"]);
    stdout_of(ws.toolhost().arg("trust"));
    assert_eq!(names(&ws), ["s_add", "t_add"]);
}

/// `read_only = true` in your config makes a typed tool's grants
/// read-only; an untrusted workspace's `read_only = false` gave the write
/// access back. It may make a tool read-only, never undo that.
#[test]
fn an_untrusted_workspace_may_not_undo_your_read_only() {
    let ws = Workspace::new();
    ws.install_users_plugin(test_plugins::TYPED, "typed.wasm");
    ws.mkdir("out");
    fs::write(
        ws.user_config().join("config.toml"),
        "[tools.typed_write_file]\nread_only = true\n",
    )
    .expect("user config");
    ws.write(
        "toolhost.toml",
        "[tools.typed_write_file]\nread_only = false\n",
    );
    let flags = ["--allow-write", "out"];
    let doc = tools_json(&ws, &flags);
    let tool = doc["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "typed_write_file")
        .expect("typed_write_file")
        .clone();
    assert_eq!(tool["read_only"], json!(true), "{tool}");
    assert_eq!(
        grants_of(&doc, "typed_write_file"),
        [(".".to_string(), "read-only".to_string())]
    );
    let input = json!({"path": "out/a.txt", "contents": "hi"}).to_string();
    ws.toolhost()
        .args(flags)
        .args(["call", "typed_write_file", &input])
        .assert()
        .failure();
    assert!(!ws.path().join("out/a.txt").exists());
}

/// Found by the second red team: an untrusted workspace's
/// `[defaults] write = ["."]` silently gave every tool, the user's own code
/// tools and plugins included, write access to the whole workspace. Until
/// the workspace is trusted, a grant to every tool to write is not applied
/// and a notice says so at start; the user's flag, their trust, or a grant
/// naming the tool that needs it (`[tools.NAME] write`) still applies.
#[test]
fn an_untrusted_workspace_may_not_give_every_tool_write_access() {
    let ws = Workspace::new();
    ws.mkdir("notes");
    ws.write(
        "toolhost.toml",
        "[defaults]\nwrite = [\".\"]\n\n[tools.edit_file]\nwrite = [\"notes\"]\n",
    );
    let root = ws.path().canonicalize().expect("canonical");
    let (code, out, err) = outcome_of(ws.toolhost().args(["tools", "--json"]), 60);
    assert_eq!(code, Some(0), "{err}");
    assert_text(
        &err,
        &format!(
            "warning: write grant `.` (from {}:2 [defaults] write) is not applied: a workspace's \
             own toolhost.toml may not give every tool write access (it may have come with the \
             repository, and every tool includes your own). To allow it, pass it yourself \
             (`--allow-write .`), name the tools that need it under [tools.NAME] write, or trust \
             this workspace (`toolhost trust {}`)\n",
            root.join("toolhost.toml").display(),
            root.display()
        ),
    );
    let doc: Value = serde_json::from_str(&out).expect("json");
    for tool in ["write_file", "read_file", "list_files"] {
        assert_eq!(
            grants_of(&doc, tool),
            vec![(".".to_owned(), "read-only".to_owned())],
            "{tool}"
        );
    }
    assert_eq!(
        grants_of(&doc, "edit_file"),
        vec![
            (".".to_owned(), "read-only".to_owned()),
            ("notes".to_owned(), "read-write".to_owned())
        ]
    );
    let refused = ws
        .call("write_file", r#"{"path": "a.txt", "content": "x"}"#, &[])
        .output()
        .expect("call");
    assert!(!ws.path().join("a.txt").exists(), "{refused:?}");

    // The user's own flag, or their trust, gives it.
    let doc = tools_json(&ws, &["--allow-write", "."]);
    assert!(
        grants_of(&doc, "write_file").contains(&(".".into(), "read-write".into())),
        "{doc}"
    );
    stdout_of(ws.toolhost().arg("trust"));
    let (code, out, err) = outcome_of(ws.toolhost().args(["tools", "--json"]), 60);
    assert_eq!((code, err.as_str()), (Some(0), ""));
    let doc: Value = serde_json::from_str(&out).expect("json");
    assert!(
        grants_of(&doc, "write_file").contains(&(".".into(), "read-write".into())),
        "{doc}"
    );
}

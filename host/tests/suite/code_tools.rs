//! The code tools `python` and `javascript`: built by `toolhost plugin
//! install` with the pinned componentize-py and componentize-js, then
//! called through the real binary and over MCP with the official Python
//! SDK. Each fault reads as any tool's
//! does (fuel, memory, output, grants), and what a call writes in a granted
//! directory is there for the next call, which starts a fresh interpreter.
//!
//! They need `TOOLHOST_PLUGIN_TOOLCHAINS` (the toolchains
//! examples/plugins/build.sh installs), which `.ci/run` sets; the MCP test
//! needs `TOOLHOST_MCP_PYTHON` too.

use std::sync::Mutex;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::toolchains::PLUGIN_TOOLCHAINS;
use super::common::{Workspace, mask_between, mcp_calls, stderr_of_failure, stdout_of};

/// One install at a time: the first builds (about a minute), the rest
/// take the build from the shared cache.
static INSTALL: Mutex<()> = Mutex::new(());

/// Installs code tool `tool` into `ws` with `toolhost plugin install`; its
/// stdout and stderr.
fn install(ws: &Workspace, tool: &str) -> (String, String) {
    PLUGIN_TOOLCHAINS.path();
    let _one = INSTALL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let output = ws
        .toolhost()
        .args(["plugin", "install", tool])
        .output()
        .expect("run plugin install");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "plugin install failed:\n{stderr}");
    (String::from_utf8_lossy(&output.stdout).into_owned(), stderr)
}

fn install_python(ws: &Workspace) -> (String, String) {
    install(ws, "python")
}

fn with(tool: &str) -> Workspace {
    let ws = Workspace::new();
    install(&ws, tool);
    ws
}

fn with_python() -> Workspace {
    with("python")
}

fn run(ws: &Workspace, code: &str, flags: &[&str]) -> String {
    run_in(ws, "python", code, flags)
}

fn fail(ws: &Workspace, code: &str, flags: &[&str]) -> String {
    fail_in(ws, "python", code, flags)
}

fn run_in(ws: &Workspace, tool: &str, code: &str, flags: &[&str]) -> String {
    let input = json!({ "code": code }).to_string();
    stdout_of(&mut ws.call(tool, &input, flags))
}

fn fail_in(ws: &Workspace, tool: &str, code: &str, flags: &[&str]) -> String {
    let input = json!({ "code": code }).to_string();
    stderr_of_failure(&mut ws.call(tool, &input, flags), 1)
}

#[test]
#[ignore = "needs TOOLHOST_PLUGIN_TOOLCHAINS (the toolchains examples/plugins/build.sh installs); .ci/run sets it"]
fn plugin_install_builds_once_and_installs_like_plugin_add() {
    let ws = Workspace::new();
    install_python(&ws);
    // A second workspace takes the build from the cache; a second install
    // in it finds the same file.
    let other = Workspace::new();
    let (stdout, stderr) = install_python(&other);
    assert_eq!(
        stdout,
        other.expand(
            "installed: `{ws}/.toolhost/plugins/python.wasm`, compiled into the cache; \
             1 tool(s): python\n"
        )
    );
    assert_eq!(
        mask_between(&stderr, "(", " s in all)", "N"),
        "the build was in the cache (N s in all)\n"
    );
    let (again, _) = install_python(&other);
    assert_eq!(
        again,
        other.expand(
            "already installed (identical): `{ws}/.toolhost/plugins/python.wasm`, compiled into \
             the cache; 1 tool(s): python\n"
        )
    );

    // Its own defaults: more fuel than a file tool, less output.
    let tools: Value =
        serde_json::from_str(&stdout_of(ws.toolhost().args(["tools", "--json"]))).expect("json");
    let python = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "python")
        .expect("python is listed");
    assert_eq!(python["limits"]["fuel"], 40_000_000_000_u64);
    assert_eq!(python["limits"]["output_bytes"], 256 << 10);
    assert_eq!(python["read_only"], false);
}

#[test]
#[ignore = "needs TOOLHOST_PLUGIN_TOOLCHAINS (the toolchains examples/plugins/build.sh installs); .ci/run sets it"]
fn python_prints_and_fails_as_the_model_should_read_it() {
    let ws = with_python();
    assert_eq!(run(&ws, "print(sum(range(1000)))", &[]), "499500\n");
    assert_eq!(
        run(
            &ws,
            "import sys\nprint('a')\nprint('b', file=sys.stderr)",
            &[]
        ),
        "a\n--- stderr ---\nb\n"
    );
    assert_eq!(
        run(&ws, "import sys\nprint('bye')\nsys.exit(0)", &[]),
        "bye\n"
    );
    assert_eq!(
        fail(&ws, "import sys\nsys.exit(3)", &[]),
        "error: `python` failed: SystemExit: 3\n"
    );
    assert_eq!(
        fail(
            &ws,
            "def half(n):\n    return n / 0\nprint('before')\nhalf(4)",
            &[]
        ),
        "error: `python` failed: before\n\
         Traceback (most recent call last):\n  \
         File \"<code>\", line 4, in <module>\n    \
         half(4)\n    \
         ~~~~^^^\n  \
         File \"<code>\", line 2, in half\n    \
         return n / 0\n           \
         ~~^~~\n\
         ZeroDivisionError: division by zero\n\n"
    );
    assert_eq!(
        fail(&ws, "def f(:", &[]),
        "error: `python` failed:   File \"<code>\", line 1\n    def f(:\n          ^\n\
         SyntaxError: invalid syntax\n\n"
    );

    // No state carries over: a fresh interpreter each call.
    assert_eq!(run(&ws, "x = 1\nprint(x)", &[]), "1\n");
    assert!(
        fail(&ws, "print(x)", &[]).ends_with("NameError: name 'x' is not defined\n\n"),
        "a name from the last call is gone"
    );

    // Every curated module is there (the issue's list).
    let modules = [
        "json",
        "re",
        "math",
        "statistics",
        "decimal",
        "fractions",
        "datetime",
        "collections",
        "itertools",
        "functools",
        "csv",
        "sqlite3",
        "textwrap",
        "difflib",
        "hashlib",
        "base64",
        "random",
        "string",
        "unicodedata",
        "pathlib",
        "io",
        "dataclasses",
        "typing",
        "heapq",
        "bisect",
        "zoneinfo",
    ];
    let code = format!(
        "import importlib\nfor m in {modules:?}:\n    importlib.import_module(m)\n\
         import sqlite3, zoneinfo, datetime, statistics\n\
         db = sqlite3.connect(':memory:')\n\
         print(db.execute('select 6 * 7').fetchone()[0])\n\
         print(datetime.datetime(2026, 7, 1, tzinfo=zoneinfo.ZoneInfo('Europe/Paris')).utcoffset())\n\
         print(statistics.median([3, 1, 2]))\n\
         print('a.b'.encode('idna'))"
    );
    assert_eq!(run(&ws, &code, &[]), "42\n2:00:00\n2\nb'a.b'\n");
}

#[test]
#[ignore = "needs TOOLHOST_PLUGIN_TOOLCHAINS (the toolchains examples/plugins/build.sh installs); .ci/run sets it"]
fn python_runs_under_the_limits_and_grants_of_any_tool() {
    let ws = with_python();
    assert_eq!(
        fail(&ws, "b = bytearray(1024 ** 3)", &[]),
        "error: `python` tried to use more than its memory limit of 256 MiB and was stopped. Ask \
         for less data in one call (a smaller file, fewer results).\n"
    );
    let flood = fail(&ws, "while True:\n    print('x' * 99)", &[]);
    assert_eq!(
        mask_between(&flood, "produced ", " bytes", "N"),
        "error: `python` produced N bytes of output, over its limit of 256 KiB; the output was \
         discarded. Ask for less in one call (use offset/limit, a narrower path or fewer results).\n"
    );

    // The workspace's own file may lower the fuel (a quick test).
    ws.write(
        "toolhost.toml",
        "[tools.python.limits]\nfuel = 1000000000\n",
    );
    assert_eq!(
        fail(&ws, "while True:\n    pass", &[]),
        "error: `python` ran out of fuel (its budget is 1000000000 instructions) and was stopped. \
         Ask for less work in one call (a narrower path, a smaller limit).\n"
    );

    // Writes: only where granted, and what is written stays for the next call.
    assert_eq!(
        fail(&ws, "open('notes.txt', 'w')", &[]),
        // The guard's refusal, which names the flag, in place of the
        // PermissionError it caused.
        "error: access denied: `python` may not write `notes.txt`: it has no write access to any \
         directory. Only the user can grant it (in toolhost.toml or with --allow-write \
         python=DIR).\n"
    );
    assert!(!ws.path().join("notes.txt").exists());
    ws.mkdir("state");
    let grant = ["--allow-write", "python=state"];
    assert_eq!(
        run(
            &ws,
            "import json\njson.dump({'seen': [1, 2]}, open('state/s.json', 'w'))\nprint('saved')",
            &grant
        ),
        "saved\n"
    );
    assert_eq!(
        run(
            &ws,
            "import json\nprint(json.load(open('state/s.json'))['seen'])",
            &grant
        ),
        "[1, 2]\n"
    );
    assert_eq!(ws.read("state/s.json"), r#"{"seen": [1, 2]}"#);
}

#[test]
#[ignore = "needs TOOLHOST_PLUGIN_TOOLCHAINS (the toolchains examples/plugins/build.sh installs); .ci/run sets it"]
fn javascript_prints_and_fails_as_the_model_should_read_it() {
    let ws = with("javascript");
    let js = |code: &str| run_in(&ws, "javascript", code, &[]);
    let js_fail = |code: &str| fail_in(&ws, "javascript", code, &[]);
    assert_eq!(
        js("console.log([1, 2, 3].reduce((a, b) => a + b), {a: [1]}, 'x')"),
        "6 {\"a\":[1]} x\n"
    );
    assert_eq!(
        js("console.error('e'); console.log('o')"),
        "o\n--- stderr ---\ne\n"
    );
    assert_eq!(
        js_fail(
            "function half(n) {\n  return n.toFixed(null.x);\n}\nconsole.log('before');\nhalf(4);"
        ),
        "error: `javascript` failed: before\n\
         TypeError: can't access property \"x\" of null\n    \
         at half (<code>:2:20)\n    \
         at <code>:5:5\n\n"
    );
    assert_eq!(
        js_fail("throw {code: 7}"),
        "error: `javascript` failed: Uncaught {\"code\":7}\n\n"
    );
    assert_eq!(
        js_fail("const r = await 1;"),
        "error: `javascript` failed: SyntaxError: await is only valid in async functions, async \
         generators and modules\n(the code runs synchronously: no await, promises or timers)\n\n"
    );
    // No state carries over, and the language's built-ins are there.
    assert_eq!(js("globalThis.kept = 1; console.log(kept)"), "1\n");
    assert_eq!(js("console.log(typeof kept)"), "undefined\n");
    assert_eq!(
        js(
            "console.log(/(\\d+)-(\\d+)/.exec('10-20')[2], new Date(0).toISOString(), 2n ** 64n, \
            new TextEncoder().encode('\u{e9}').length, [3, 1, 2].toSorted())"
        ),
        "20 1970-01-01T00:00:00.000Z 18446744073709551616n 2 [1,2,3]\n"
    );
}

#[test]
#[ignore = "needs TOOLHOST_PLUGIN_TOOLCHAINS (the toolchains examples/plugins/build.sh installs); .ci/run sets it"]
fn javascript_runs_under_the_limits_and_grants_of_any_tool() {
    let ws = with("javascript");
    let js_fail = |code: &str, flags: &[&str]| fail_in(&ws, "javascript", code, flags);
    assert_eq!(
        js_fail("const a = new Uint8Array(1024 ** 3)", &[]),
        "error: `javascript` tried to use more than its memory limit of 256 MiB and was stopped. \
         Ask for less data in one call (a smaller file, fewer results).\n"
    );
    let flood = js_fail("while (true) console.log('x'.repeat(99))", &[]);
    assert_eq!(
        mask_between(&flood, "produced ", " bytes", "N"),
        "error: `javascript` produced N bytes of output, over its limit of 256 KiB; the output \
         was discarded. Ask for less in one call (use offset/limit, a narrower path or fewer \
         results).\n"
    );
    assert_eq!(
        js_fail("fs.writeFile('notes.txt', 'x')", &[]),
        "error: access denied: `javascript` may not write `notes.txt`: it has no write access to \
         any directory. Only the user can grant it (in toolhost.toml or with --allow-write \
         javascript=DIR).\n"
    );
    assert_eq!(
        js_fail("fs.readFile('/etc/passwd')", &[]),
        "error: `javascript` failed: Error: `/etc/passwd` is not inside a directory this tool \
         may use\n    at <code>:1:4\n\n"
    );
    assert!(!ws.path().join("notes.txt").exists());
    ws.mkdir("state");
    let grant = ["--allow-write", "javascript=state"];
    assert_eq!(
        run_in(
            &ws,
            "javascript",
            "fs.writeFile('state/s.json', JSON.stringify({seen: [1, 2]})); console.log('saved')",
            &grant
        ),
        "saved\n"
    );
    assert_eq!(
        run_in(
            &ws,
            "javascript",
            "console.log(JSON.parse(fs.readFile('state/s.json')).seen, fs.readdir('state'))",
            &grant
        ),
        "[1,2] [\"s.json\"]\n"
    );
    ws.write(
        "toolhost.toml",
        "[tools.javascript.limits]\nfuel = 1000000000\n",
    );
    assert_eq!(
        js_fail("while (true) {}", &[]),
        "error: `javascript` ran out of fuel (its budget is 1000000000 instructions) and was \
         stopped. Ask for less work in one call (a narrower path, a smaller limit).\n"
    );
}

#[test]
#[ignore = "needs TOOLHOST_PLUGIN_TOOLCHAINS and TOOLHOST_MCP_PYTHON; .ci/run sets them"]
fn code_tools_over_mcp_read_as_through_the_binary() {
    let ws = with_python();
    install(&ws, "javascript");
    ws.mkdir("state");
    let flags = [
        "--allow-write",
        "python=state",
        "--allow-write",
        "javascript=state",
    ];
    let calls = json!([
        ["python", {"code": "print(sum(range(1000)))"}],
        ["python", {"code": "raise ValueError('no')"}],
        ["python", {"code": "open('state/n.txt', 'w').write('7')"}],
        ["python", {"code": "print(open('state/n.txt').read())"}],
        ["javascript", {"code": "let s = 0; for (let i = 0; i < 1000; i++) s += i; console.log(s)"}],
        ["javascript", {"code": "throw new RangeError('no')"}],
        ["javascript", {"code": "console.log(fs.readFile('state/n.txt'))"}],
    ]);
    let seen = mcp_calls(&ws, &flags, &calls);
    assert_eq!(
        seen["results"],
        json!([
            {"blocks": 1, "text": "499500\n", "is_error": false},
            {"blocks": 1, "text": "error: `python` failed: Traceback (most recent call last):\n  \
              File \"<code>\", line 1, in <module>\n    raise ValueError('no')\n\
              ValueError: no\n", "is_error": true},
            {"blocks": 1, "text": "", "is_error": false},
            {"blocks": 1, "text": "7\n", "is_error": false},
            {"blocks": 1, "text": "499500\n", "is_error": false},
            {"blocks": 1, "text": "error: `javascript` failed: RangeError: no\n    at <code>:1:7\n", "is_error": true},
            {"blocks": 1, "text": "7\n", "is_error": false},
        ])
    );
    for tool in ["python", "javascript"] {
        let mut title = tool.to_string();
        title[..1].make_ascii_uppercase();
        assert_eq!(
            seen["annotations"][tool],
            json!({"title": title, "readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false})
        );
    }
}

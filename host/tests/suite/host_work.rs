//! What the host spends for a plugin outside the guest's own limits.
//!
//! Checking a tool's input against its schema happens before any wasm
//! runs, so no fuel or epoch reaches it: a schema that doubles at every
//! level is refused at load; one under the cap that is still slow to check
//! ends at the call's deadline, off the thread that answers other requests.
//! Descriptors and directory listings are host resources a call holds: each
//! is capped. Empty files and holes cost the disk without a byte written:
//! the write budget charges them.

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use super::common::{Workspace, fixture, stderr_of_failure, stdout_of, test_plugins};
use super::escape::Repo;
use super::mcp::{RawServer, call};

#[test]
fn a_schema_that_doubles_at_every_level_is_refused_at_load_and_the_rest_loads() {
    let ws = Workspace::new();
    let bomb = fixture(test_plugins::SCHEMA_BOMB);
    let started = Instant::now();
    let err = stderr_of_failure(ws.toolhost().args(["plugin", "check"]).arg(&bomb), 1);
    assert_eq!(
        err,
        format!(
            "error: plugin `{}`: tool `nested`: its `input-schema` expands to more than 100000 \
             subschemas when its `$ref`s are followed (nested `anyOf`/`oneOf`/`allOf` over \
             `$ref`s double it at every level), which would take the host minutes to check; \
             flatten the schema\n",
            bomb.display()
        )
    );

    ws.install_plugin(test_plugins::SCHEMA_BOMB, "bomb.wasm");
    ws.install_plugin(test_plugins::ECHO, "echo.wasm");
    let out = stdout_of(&mut ws.call("echo", r#"{"text":"still here"}"#, &[]));
    assert_eq!(out, "still here\n");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
}

/// A description the host would hold, print and send to the model with
/// every request is refused at load when it passes 64 KiB.
#[test]
fn a_tool_description_of_megabytes_is_refused_at_load_and_the_rest_loads() {
    let ws = Workspace::new();
    let big = fixture(test_plugins::BIG_SPEC);
    let err = stderr_of_failure(ws.toolhost().args(["plugin", "check"]).arg(&big), 1);
    assert_eq!(
        err,
        format!(
            "error: plugin `{}`: tool `big`: its description is 4400000 bytes, over the limit of \
             64 KiB (it is sent to the model with every request); shorten it\n",
            big.display()
        )
    );
    ws.install_plugin(test_plugins::BIG_SPEC, "big.wasm");
    ws.install_plugin(test_plugins::ECHO, "echo.wasm");
    let out = stdout_of(&mut ws.call("echo", r#"{"text":"still here"}"#, &[]));
    assert_eq!(out, "still here\n");
}

/// A workspace serving the hostile and echo fixtures, `slow_schema` with a
/// 3 s deadline.
fn workspace() -> Workspace {
    let ws = Workspace::new();
    ws.mkdir("out");
    ws.install_plugin(test_plugins::HOSTILE, "hostile.wasm");
    ws.install_plugin(test_plugins::ECHO, "echo.wasm");
    std::fs::write(
        ws.user_config().join("config.toml"),
        "[tools.slow_schema]\nlimits = { timeout_ms = 3000 }\n",
    )
    .expect("user config");
    ws
}

/// 90,000 items, each of which fails every branch of the fixture's
/// 14-level tree: minutes of checking without the deadline, and within the
/// 100,000 JSON values `toolhost mcp` parses of one message.
fn slow_input() -> serde_json::Value {
    json!({"items": vec![0; 90_000]})
}

#[test]
fn a_slow_schema_check_ends_at_the_deadline_while_other_requests_are_answered() {
    let ws = workspace();
    let mut server = RawServer::start(&ws, &["--no-session"]);
    let started = Instant::now();
    server.send(call(1, "slow_schema", slow_input()));
    std::thread::sleep(Duration::from_millis(200));
    server.send(json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}));
    server.send(call(3, "echo", json!({"text": "meanwhile"})));
    let mut answered = [server.response(), server.response()];
    answered.sort_by_key(|r| r["id"].as_u64());
    let [ping, echo] = answered;
    assert_eq!(ping, json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    assert_eq!(echo["id"], 3, "{echo}");
    assert_eq!(echo["result"]["content"][0]["text"], "meanwhile");
    // Answered before the slow call's 3 s deadline (and so before its own
    // answer): they did not wait for it. On a loaded 2-core machine they
    // take a second or two; they must not take the deadline.
    assert!(
        started.elapsed() < Duration::from_millis(2900),
        "the other requests waited {:?}",
        started.elapsed()
    );

    let slow = server.response();
    let took = started.elapsed();
    assert_eq!(slow["id"], 1, "{slow}");
    assert_eq!(slow["result"]["isError"], true, "{slow}");
    assert_eq!(
        slow["result"]["content"][0]["text"],
        "error: `slow_schema` did not finish within its time limit of 3 s and was stopped. \
         Ask for less work in one call, or do not call it again with the same arguments."
    );
    assert!(
        took >= Duration::from_secs(3) && took < Duration::from_secs(5),
        "ended after {took:?}"
    );

    // A good call of the same tool still works.
    server.send(call(4, "slow_schema", json!({"items": ["a", "b"]})));
    let good = server.response();
    assert_eq!(
        good["result"]["content"][0]["text"], "checked 2 items",
        "{good}"
    );
    server.close();
}

#[test]
fn a_cancelled_or_abandoned_schema_check_stops_at_once() {
    let ws = workspace();
    let mut server = RawServer::start(&ws, &["--no-session"]);
    server.send(call(1, "slow_schema", slow_input()));
    std::thread::sleep(Duration::from_millis(300));
    server.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "test"}}),
    );
    server.send(call(2, "echo", json!({"text": "next"})));
    let next = server.response();
    assert_eq!(next["id"], 2, "the cancelled call was answered: {next}");

    // Closing stdin while a check runs: the server exits well before the
    // 3 s deadline (`close` also asserts a clean exit).
    server.send(call(3, "slow_schema", slow_input()));
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    let (_, rest) = server.close();
    for message in &rest {
        assert_eq!(message["id"], 3, "{message}");
        assert_eq!(message["result"]["isError"], true, "{message}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "exit took {:?}",
        started.elapsed()
    );
}

/// What one call may hold at once: 4096 descriptors (a quarter of
/// `ulimit -n` when that is below 16,384), as `Held::limit` says.
fn descriptor_cap() -> usize {
    let limits = std::fs::read_to_string("/proc/self/limits").expect("limits");
    let soft: usize = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|n| n.parse().ok())
        .expect("a soft limit of open files");
    4096.min(soft / 4)
}

#[test]
fn a_call_holds_a_bounded_number_of_descriptors_and_listings() {
    let repo = Repo::new();
    let cap = descriptor_cap();
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "hold_open", "path": "src/main.rs", "count": cap + 1000}),
            &[],
        ),
        1,
    );
    assert_eq!(
        err,
        format!(
            "error: `raw` held more than {cap} files and directories open at once and was \
             stopped. Ask for fewer files in one call.\n"
        )
    );
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "hold_open", "path": "src/main.rs", "count": cap}),
        &[],
    ));
    assert_eq!(out, format!("held {cap}\n"));

    for n in 0..300 {
        repo.ws.write(&format!("src/many/{n}.txt"), "x");
    }
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "hold_listings", "path": "src/many", "count": 1000}),
            &[],
        ),
        1,
    );
    assert_eq!(
        err,
        "error: `raw` held more than 256 directory listings open at once and was stopped. Ask \
         for a shallower or narrower listing in one call.\n"
    );
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "hold_listings", "path": "src/many", "count": 256}),
        &[],
    ));
    assert_eq!(out, "held 256\n");
    repo.assert_still_works(0);
}

/// Empty files cost the disk an inode and a block each; a write far past
/// the end makes a file of that size.
#[test]
fn every_created_entry_and_every_hole_counts_against_the_write_budget() {
    let repo = Repo::new();
    repo.ws.write("toolhost.toml", "[limits]\nwrite_mib = 1\n");
    let budget_exceeded = "error: `raw` tried to write more than its limit of 1 MiB to files \
         in one call and was stopped; what it wrote before that stays on disk. Write less in one \
         call (smaller files, fewer of them).\n";
    // 1 MiB buys 256 entries of 4 KiB.
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "create_many", "path": "src/empty-", "count": 1000}),
            &[],
        ),
        1,
    );
    assert_eq!(err, budget_exceeded);
    let created = std::fs::read_dir(repo.ws.path().join("src"))
        .expect("src")
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.file_name().to_string_lossy().starts_with("empty-"))
        })
        .count();
    assert_eq!(created, 256);
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "create_many", "path": "src/more-", "count": 250}),
        &[],
    ));
    assert_eq!(out, "created 250\n");

    for stream in [false, true] {
        let path = format!("src/sparse-{stream}.bin");
        let err = stderr_of_failure(
            &mut repo.raw(
                &json!({"op": "write_at", "path": path, "text": "x",
                    "offset": 1u64 << 40, "stream": stream}),
                &[],
            ),
            1,
        );
        assert_eq!(err, budget_exceeded, "stream: {stream}");
        let size = std::fs::metadata(repo.ws.path().join(&path)).map_or(0, |m| m.len());
        assert_eq!(size, 0, "stream: {stream}");
    }
    // Writing inside a file, or just past its end, costs what it writes.
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "write_at", "path": "src/main.rs", "text": "//", "offset": 13}),
        &[],
    ));
    assert_eq!(out, "ok\n");
    assert_eq!(repo.ws.read("src/main.rs"), "fn main() {}\n//");
    repo.assert_still_works(1);
}

/// A repository may ship `.toolhost/sessions/*.jsonl`: one of 100 GB (a
/// sparse file) is refused unread, by `sessions`, `sessions show` and
/// `run --resume`, each in well under a second.
#[test]
fn a_shipped_session_file_of_100_gb_is_refused_unread() {
    let ws = Workspace::new();
    let file = ws.write(".toolhost/sessions/20261202-000000-aaaa.jsonl", "");
    std::fs::File::options()
        .write(true)
        .open(&file)
        .and_then(|f| f.set_len(100_000_000_000))
        .expect("a sparse file");
    let refusal = format!(
        "`{}` is 100000000000 bytes, over the 1 GiB toolhost reads of a session file (it may \
         have come with the repository); move it away, or delete it",
        file.display()
    );
    let started = Instant::now();
    let out = stdout_of(ws.toolhost().arg("sessions"));
    assert_eq!(
        out,
        format!(
            "ID                     STARTED (UTC)       TURNS  STOP          PROMPT\n\
             unreadable: {}\n",
            refusal.replace(&ws.path().display().to_string(), ".")
        )
    );
    let err = stderr_of_failure(ws.toolhost().args(["sessions", "show", "last"]), 1);
    assert_eq!(
        err,
        format!(
            "error: {}\n",
            refusal.replace(&ws.path().display().to_string(), ".")
        )
    );
    ws.write("script.json", r#"{"turns": [{"text": "done"}]}"#);
    let err = stderr_of_failure(
        ws.toolhost().args([
            "run",
            "--script",
            "script.json",
            "--resume",
            "last",
            "go on",
        ]),
        1,
    );
    assert!(err.ends_with(&format!("error: {refusal}\n")), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // A new run starts a session of its own beside it.
    let out = stdout_of(
        ws.toolhost()
            .args(["run", "--script", "script.json", "hello"]),
    );
    assert_eq!(out, "done\n");
}

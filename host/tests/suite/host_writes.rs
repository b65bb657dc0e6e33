//! What toolhost itself writes under `.toolhost/` (saved long results,
//! session files): private to the user however the directory was found,
//! ignored by git, and held to a budget a hostile model cannot outgrow.

use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::common::{Workspace, mask_between};

/// Writes `turns` as a script into the workspace and returns its path.
fn script(ws: &Workspace, turns: Value) -> String {
    ws.write("script.json", json!({ "turns": turns }).to_string())
        .display()
        .to_string()
}

/// Runs `toolhost` with `args` in `ws`, which must succeed.
fn run_ok(ws: &Workspace, args: &[&str]) {
    let out = ws.toolhost().args(args).output().expect("run");
    assert!(out.status.success(), "{out:?}");
}

/// The session files' names in `dir` of `ws`, sorted.
fn session_names(ws: &Workspace, dir: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(ws.path().join(dir))
        .expect(dir)
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".jsonl"))
        .collect();
    names.sort();
    names
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

/// Every path under `dir`, its own included, with its mode.
fn modes_under(dir: &Path) -> Vec<(String, u32)> {
    let mut found = vec![(".".to_owned(), mode(dir))];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).expect("read_dir") {
            let path = entry.expect("entry").path();
            let name = path.strip_prefix(dir).expect("under").display().to_string();
            found.push((name, mode(&path)));
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    found.sort();
    found
}

/// Found by the second red team: a repository that ships
/// `.toolhost/plugins/` makes `.toolhost` 0755, and saved outputs were then
/// written 0644 in a 0755 directory (they hold what tools read from private
/// places), with no `.gitignore`. Everything toolhost writes there is the
/// user's alone, and git ignores it.
#[test]
fn what_toolhost_writes_under_a_shipped_state_directory_is_private_and_ignored() {
    let ws = Workspace::new();
    ws.mkdir(".toolhost/plugins");
    for dir in [".toolhost", ".toolhost/plugins"] {
        std::fs::set_permissions(ws.path().join(dir), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
    }
    ws.write("big.txt", "a long line of text\n".repeat(4000));
    let script = script(
        &ws,
        json!([
            {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "big.txt"}}]},
            {"text": "done"}
        ]),
    );
    let out = ws
        .toolhost()
        .args(["run", "--script", &script, "read big.txt"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    let sessions: Vec<String> = std::fs::read_dir(ws.path().join(".toolhost/sessions"))
        .expect("sessions")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(
        modes_under(&ws.path().join(".toolhost")),
        vec![
            (".".to_owned(), 0o700),
            (".gitignore".to_owned(), 0o600),
            ("outputs".to_owned(), 0o700),
            ("outputs/c1.txt".to_owned(), 0o600),
            // Shipped, and not toolhost's to change.
            ("plugins".to_owned(), 0o755),
            ("sessions".to_owned(), 0o700),
            (format!("sessions/{}", sessions[0]), 0o600),
        ]
    );
    assert_eq!(
        ws.read(".toolhost/.gitignore"),
        "# Made by toolhost: sessions, saved tool results and plugins, not for git.\n*\n"
    );
    // A `.gitignore` already there, and a resumed session, stay as they are
    // but for the mode.
    ws.write(".toolhost/.gitignore", "sessions/\n");
    let session = ws.path().join(".toolhost/sessions").join(&sessions[0]);
    std::fs::set_permissions(&session, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let again = ws
        .toolhost()
        .args(["run", "--resume", "last", "--script", &script, "again"])
        .output()
        .expect("run");
    assert!(again.status.success(), "{again:?}");
    assert_eq!(ws.read(".toolhost/.gitignore"), "sessions/\n");
    assert_eq!(mode(&session), 0o600);
}

/// `n` calls of `read_file` on `path`, with ids `{prefix}{i}`, each from
/// its own line (the loop detector stops calls repeated as they are).
fn reads(prefix: &str, n: usize, path: &str) -> Value {
    (1..=n)
        .map(|i| {
            json!({"id": format!("{prefix}{i}"), "name": "read_file", "arguments": {"path": path, "offset": i}})
        })
        .collect()
}

/// Bytes of the files under `dir`.
fn bytes_under(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.expect("entry").metadata().expect("meta").len())
                .sum()
        })
        .unwrap_or(0)
}

fn session_records(ws: &Workspace) -> Vec<Vec<Value>> {
    let mut files: Vec<_> = std::fs::read_dir(ws.path().join(".toolhost/sessions"))
        .expect("sessions")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|file| {
            std::fs::read_to_string(file)
                .expect("session")
                .lines()
                .map(|line| serde_json::from_str(line).expect("record"))
                .collect()
        })
        .collect()
}

/// Found by the second red team: every result over the model's budget was
/// saved whole, outside any write budget, and the session file and the
/// host's memory grew with it (20 turns of 250 reads: 4.7 GB of disk, a
/// 290 MB session file). Saved results are held to a run's budget and the
/// workspace's, oldest dropped first, and a dropped one says so when the
/// model reads it; a session file keeps results only up to its budget.
#[test]
fn a_model_asking_for_long_results_without_end_stays_within_the_records_budget() {
    let ws = Workspace::new();
    let line = "x".repeat(120);
    let big: String = (1..=1500).map(|n| format!("{n} {line}\n")).collect();
    ws.write("big.txt", &big);
    // 1 MiB a run, 2 MiB the workspace: each whole result is ~190 KiB.
    let budget = [("TOOLHOST_RECORDS_MIB", "1,2")];
    let turns: Vec<Value> = (1..=5)
        .map(|turn| json!({"tool_calls": reads(&format!("t{turn}c"), 20, "big.txt")}))
        .chain([
            json!({"tool_calls": [{"id": "again", "name": "read_file", "arguments": {"path": ".toolhost/outputs/t1c1.txt"}}]}),
            json!({"text": "done"}),
        ])
        .collect();
    let script = script(&ws, Value::Array(turns));
    let out = ws
        .toolhost()
        .envs(budget)
        .args(["run", "--result-budget", "2", "--script", &script, "read"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    let outputs = ws.path().join(".toolhost/outputs");
    assert!(
        bytes_under(&outputs) <= 2 << 20,
        "{}",
        bytes_under(&outputs)
    );
    let whole: u64 = std::fs::read_dir(&outputs)
        .expect("outputs")
        .map(|e| e.expect("entry").metadata().expect("meta").len())
        .filter(|&len| len > 1024)
        .sum();
    assert!(whole <= 1 << 20, "{whole}");
    // The model asked for a dropped one and read why it is gone.
    let records = &session_records(&ws)[0];
    let again = records
        .iter()
        .find(|r| r["type"] == "tool_execution_end" && r["call_id"] == "again")
        .expect("the last read");
    let seen = again["text"].as_str().expect("text");
    assert_eq!(
        mask_between(seen.trim_end(), "whole text (", " bytes)", "N"),
        "     1\t[toolhost no longer keeps this output: its whole text (N bytes) was dropped to \
         keep saved results within their budget (1 MiB a run, 2 MiB a workspace; the oldest go \
         first). Call the tool again if you need it.]"
    );
    let first_id = records[0]["id"].clone();

    // A later run, each result whole in the session: the session file keeps
    // results to 1 MiB, and the directory stays within the workspace's 2 MiB.
    let out = ws
        .toolhost()
        .envs(budget)
        .args(["run", "--script", &script, "read again"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    assert!(
        bytes_under(&outputs) <= 2 << 20,
        "{}",
        bytes_under(&outputs)
    );
    let sessions = ws.path().join(".toolhost/sessions");
    let files: Vec<u64> = std::fs::read_dir(&sessions)
        .expect("sessions")
        .map(|e| e.expect("entry").metadata().expect("meta").len())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(files.iter().all(|&len| len <= 3 << 20), "{files:?}");
    let second = session_records(&ws)
        .into_iter()
        .find(|records| records[0]["id"] != first_id)
        .expect("the second session");
    let not_kept = second
        .iter()
        .filter(|r| {
            r["type"] == "tool_execution_end"
                && r["text"]
                    == "[toolhost did not keep this result in the session file: the file passed the 1 MiB \
                        its results may take]"
        })
        .count();
    assert!(not_kept > 0, "no result was left out of the session");
    let stop = second.last().expect("records");
    assert_eq!(stop["type"], "stop", "{stop}");
}

/// Session files are the user's: when the oldest go to keep the
/// workspace's within its budget, the run says so, with the setting that
/// keeps more.
#[test]
fn a_run_says_which_old_session_files_it_removed_to_make_room() {
    let ws = Workspace::new();
    let sessions = ws.path().join(".toolhost/sessions");
    std::fs::create_dir_all(&sessions).expect("mkdir");
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000);
    for (n, name) in ["20200101-000000-aaaa", "20200101-000001-bbbb"]
        .iter()
        .enumerate()
    {
        let path = sessions.join(format!("{name}.jsonl"));
        std::fs::write(&path, "x".repeat(700 << 10)).expect("write");
        std::fs::File::options()
            .write(true)
            .open(&path)
            .expect("open")
            .set_modified(old + std::time::Duration::from_secs(n as u64))
            .expect("touch");
    }
    let script = script(&ws, json!([{"text": "done"}]));
    let out = ws
        .toolhost()
        .env("TOOLHOST_RECORDS_MIB", "1,1")
        .args(["run", "--script", &script, "hello"])
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = format!(
        "removed the 1 oldest session file (1 MiB) from `{}` to keep its session files within \
         1 MiB; set `TOOLHOST_RECORDS_MIB=RUN,WORKSPACE` to keep more",
        sessions.display()
    );
    assert!(
        stderr.lines().any(|l| l == line),
        "no line\n{line}\nin\n{stderr}"
    );
    let names = session_names(&ws, ".toolhost/sessions");
    assert_eq!(names.len(), 2, "{names:?}");
    assert_eq!(names[0], "20200101-000001-bbbb.jsonl");
}

/// What `toolhost call` prints for `input` to `tool` (stdout, then stderr).
fn call_output(ws: &Workspace, tool: &str, input: &Value, flags: &[&str]) -> (String, String) {
    let out = ws
        .call(tool, &input.to_string(), flags)
        .output()
        .expect("call");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Found by the second red team: session files hold what every tool read
/// (from wherever it was granted), and every tool could read
/// `.toolhost/sessions/` with the default grant of `.`: a call with no
/// grant to a private directory printed what another tool had read there.
/// No tool reads toolhost's session files, whatever its grants and whatever
/// route its path takes (a link, a listing, a grant of the directory).
#[test]
fn no_tool_reads_toolhost_s_session_files() {
    let ws = Workspace::new();
    ws.add_plugin(super::common::test_plugins::ESCAPE, "escape.wasm");
    ws.write("private/key.txt", "SECRET-KEY\n");
    ws.write("a.txt", "hello\n");
    let script = script(
        &ws,
        json!([
            {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "private/key.txt"}}]},
            {"text": "done"}
        ]),
    );
    run_ok(&ws, &["run", "--script", &script, "read the key"]);
    let [session] = &session_names(&ws, ".toolhost/sessions")[..] else {
        panic!("one session");
    };
    assert!(
        ws.read(&format!(".toolhost/sessions/{session}"))
            .contains("SECRET-KEY")
    );
    std::os::unix::fs::symlink(
        format!(".toolhost/sessions/{session}"),
        ws.path().join("notes.txt"),
    )
    .expect("symlink");

    let refusal = |path: &str| {
        format!(
            "error: `read_file` may not read `{path}`: `.toolhost/sessions` holds toolhost's session \
             files, which record what every tool read, and no tool may read them, whatever its \
             grants. Ask the user, who can show a session with `toolhost sessions show ID`.\n"
        )
    };
    let shown = format!(".toolhost/sessions/{session}");
    for (input, flags) in [
        (json!({"path": shown}), vec![]),
        // Through a link, and with the directory granted by name.
        (json!({"path": "notes.txt"}), vec![]),
        (
            json!({"path": shown}),
            vec!["--allow-read", "read_file=.toolhost/sessions"],
        ),
    ] {
        let (stdout, stderr) = call_output(&ws, "read_file", &input, &flags);
        assert!(!stdout.contains("SECRET"), "{stdout}");
        assert_eq!(stderr, refusal(&shown), "{input} {flags:?}");
    }
    // A raw WASI listing of the directory.
    let (stdout, stderr) = call_output(
        &ws,
        "raw",
        &json!({"op": "list", "dir": ".toolhost/sessions"}),
        &[],
    );
    assert!(!stdout.contains(session.as_str()), "{stdout}");
    assert_eq!(
        stderr,
        refusal(".toolhost/sessions").replace("`read_file`", "`raw`")
    );
    // A good read still works.
    let (stdout, stderr) = call_output(&ws, "read_file", &json!({"path": "a.txt"}), &[]);
    assert_eq!((stdout.as_str(), stderr.as_str()), ("     1\thello\n", ""));
}

/// The same class through saved outputs: a result cut for the model is
/// saved whole under `.toolhost/outputs/`, and any tool granted the
/// workspace could read there what another tool read from a directory it
/// may not (on main `search_text` found the secret there). Only the
/// standard `read_file`, which the model pages through a cut result with,
/// reads them.
#[test]
fn only_read_file_reads_the_results_toolhost_saved() {
    let ws = Workspace::new();
    ws.add_plugin(super::common::test_plugins::ESCAPE, "escape.wasm");
    let long: String = (1..=400)
        .map(|n| format!("{n} SECRET-LINE of a private file\n"))
        .collect();
    ws.write("private/notes.txt", &long);
    let script = script(
        &ws,
        json!([
            {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "private/notes.txt"}}]},
            {"text": "done"}
        ]),
    );
    let out = ws
        .toolhost()
        .args([
            "run",
            "--result-budget",
            "1",
            "--script",
            &script,
            "read it",
        ])
        .output()
        .expect("run");
    assert!(out.status.success(), "{out:?}");
    assert!(
        ws.read(".toolhost/outputs/c1.txt")
            .contains("400 SECRET-LINE")
    );

    let refusal = |tool: &str, path: &str| {
        format!(
            "error: `{tool}` may not read `{path}`: `.toolhost/outputs` holds the whole results \
             toolhost saved, which hold what other tools read, and only `read_file` may read them. \
             Read it with `read_file` instead.\n"
        )
    };
    let (stdout, stderr) = call_output(
        &ws,
        "search_text",
        &json!({"pattern": "SECRET", "path": ".toolhost/outputs"}),
        &[],
    );
    // search_text skips what it may not read and says so; toolhost's
    // refusal follows its answer.
    assert_eq!(
        (stdout, stderr.as_str()),
        (
            "no matches for `SECRET` in `.toolhost/outputs`\n(skipped: .toolhost/outputs: IO error \
             for operation on .toolhost/outputs: Operation not permitted (os error 63))\n\
             --- toolhost ---\n"
                .to_string() + &refusal("search_text", ".toolhost/outputs"),
            ""
        )
    );
    let (stdout, stderr) = call_output(
        &ws,
        "raw",
        &json!({"op": "list", "dir": ".toolhost/outputs"}),
        &[],
    );
    assert!(!stdout.contains("c1.txt"), "{stdout}");
    assert_eq!(stderr, refusal("raw", ".toolhost/outputs"));
    // The model still pages through it with `read_file`.
    let (stdout, stderr) = call_output(
        &ws,
        "read_file",
        &json!({"path": ".toolhost/outputs/c1.txt", "offset": 400, "limit": 1}),
        &[],
    );
    assert_eq!(
        (stdout.as_str(), stderr.as_str()),
        (
            "   400\t   400\t400 SECRET-LINE of a private file\n(showing lines 400-400 of 400)\n",
            ""
        )
    );
}

/// The same for sessions the user keeps inside the workspace with
/// `--session-dir`: the directory the command line names is toolhost's
/// record wherever it is, and no tool reads it (on main `read_file` of the
/// first run's session file printed what it had read).
#[test]
fn no_tool_reads_a_session_dir_the_command_line_names() {
    let ws = Workspace::new();
    ws.write("private/key.txt", "SECRET-KEY\n");
    ws.write("a.txt", "hello\n");
    let first = script(
        &ws,
        json!([
            {"tool_calls": [{"id": "c1", "name": "read_file", "arguments": {"path": "private/key.txt"}}]},
            {"text": "done"}
        ]),
    );
    run_ok(
        &ws,
        &[
            "run",
            "--session-dir",
            "state",
            "--script",
            &first,
            "read the key",
        ],
    );
    let [session] = &session_names(&ws, "state")[..] else {
        panic!("one session");
    };
    assert!(ws.read(&format!("state/{session}")).contains("SECRET-KEY"));

    let second = ws.write(
        "second.json",
        json!({"turns": [
            {"tool_calls": [
                {"id": "r1", "name": "read_file", "arguments": {"path": format!("state/{session}")}},
                {"id": "r2", "name": "read_file", "arguments": {"path": "a.txt"}}
            ]},
            {"text": "done"}
        ]})
        .to_string(),
    );
    let second = second.display().to_string();
    run_ok(
        &ws,
        &[
            "run",
            "--session-dir",
            "state",
            "--script",
            &second,
            "read it back",
        ],
    );
    let second_session = session_names(&ws, "state")
        .into_iter()
        .find(|name| name != session)
        .expect("the second session");
    let text_of = |call: &str| {
        ws.read(&format!("state/{second_session}"))
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).expect("record"))
            .find(|r| r["type"] == "tool_execution_end" && r["call_id"] == call)
            .and_then(|r| r["text"].as_str().map(str::to_owned))
            .expect("the call's result")
    };
    assert_eq!(
        text_of("r1"),
        format!(
            "error: `read_file` may not read `state/{session}`: toolhost writes its sessions or its \
             token in `state` (the command line names it), and no tool may read them, whatever its \
             grants. Ask the user, who can show a session with `toolhost sessions show ID`."
        )
    );
    assert_eq!(text_of("r2"), "     1\thello\n");
}

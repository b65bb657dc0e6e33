//! Races against the file-system guard (SECURITY.md): a check of one path
//! and an action on another. Two processes, as two agents with two
//! `toolhost mcp` servers on one workspace, and a tool that declares itself
//! read-only (so it would run beside others) but writes.

use std::os::unix::fs::symlink;
use std::thread;
use std::time::Duration;

use serde_json::json;

use super::common::{stderr_of_failure, stdout_of};
use super::escape::Repo;

/// How long each side of the race runs. Before the guard acted through held
/// handles, 2 s of renames against the swap won a few dozen to hundreds of
/// times on a 2-core machine.
const RACE_MS: u64 = 2500;

/// A bare repository the workspace ships at `bare`, whose `config` is
/// refused to a plain write.
fn ship_bare_repository(repo: &Repo) {
    repo.ws.write("bare/HEAD", "ref: refs/heads/main\n");
    repo.ws.mkdir("bare/objects");
    repo.ws.mkdir("bare/refs");
    repo.ws.write("bare/config", "[core]\n\tbare = true\n");
}

/// Runs `swap` (the `escape` fixture's swap loop) and, once it has started,
/// `racer` in a second `toolhost` process, as two agents on one workspace
/// would; returns what the racer and the swap answered.
fn race(repo: &Repo, swap: serde_json::Value, racer: serde_json::Value) -> (String, String) {
    let mut swap = repo.raw(&swap, &[]);
    let mut racer = repo.raw(&racer, &[]);
    let swapper = thread::spawn(move || stdout_of(&mut swap));
    // Let the swap loop start (its process loads plugins too).
    thread::sleep(Duration::from_millis(300));
    let raced = stdout_of(&mut racer);
    let swapped = swapper.join().expect("swap thread");
    assert!(swapped.starts_with("swapped "), "{swapped}");
    (raced, swapped)
}

#[test]
fn a_rename_racing_a_directory_swap_never_lands_in_a_protected_path() {
    let repo = Repo::new();
    repo.ws.mkdir("d");
    // `R -> .`: swapped for `d`, the rename's `d/.git/config` becomes the
    // workspace's own `.git/config`.
    symlink(".", repo.ws.path().join("R")).expect("symlink");
    let before = repo.snapshot();

    let (renamed, swapped) = race(
        &repo,
        json!({"op": "swap", "a": "d", "b": "R", "ms": RACE_MS + 1000}),
        json!({
            "op": "race_rename",
            "from": "src/payload",
            "to": "d/.git/config",
            "text": "[core]\n\tfsmonitor = touch /tmp/pwned\n",
            "ms": RACE_MS,
        }),
    );

    // The fixture's answer is its first line; the guard's first refusal
    // follows it.
    let tried: u64 = renamed
        .lines()
        .next()
        .unwrap_or_default()
        .rsplit(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("won N of M");
    assert!(
        renamed.starts_with("won 0 of ") && tried > 100,
        "renames: {renamed}"
    );
    let rounds: u64 = swapped
        .trim()
        .strip_prefix("swapped ")
        .and_then(|rest| rest.strip_suffix(" times"))
        .and_then(|n| n.parse().ok())
        .expect("swapped N times");
    assert!(rounds > 100, "the swap hardly ran: {swapped}");
    assert_eq!(repo.snapshot(), before, "the race changed a protected path");
    repo.assert_still_works(0);
}

#[test]
fn a_rename_racing_a_repository_swapped_for_a_decoy_never_lands_in_it() {
    let repo = Repo::new();
    // A shipped bare repository (its config is refused to a plain write)
    // and a decoy the other process swaps in and out of its place, as a
    // whole, which is allowed.
    ship_bare_repository(&repo);
    repo.ws.mkdir("decoy");
    let before = repo.ws.read("bare/config");

    let (renamed, _) = race(
        &repo,
        json!({"op": "swap", "a": "bare", "b": "decoy", "ms": RACE_MS + 1000}),
        json!({
            "op": "race_rename",
            "from": "src/payload",
            "to": "bare/config",
            "text": "[core]\n\tfsmonitor = touch /tmp/pwned\n",
            "ms": RACE_MS,
        }),
    );
    // Renames into the decoy are fine; none may reach the repository,
    // wherever the swap left it.
    assert!(renamed.starts_with("won "), "{renamed}");
    let repository = ["bare", "decoy"]
        .into_iter()
        .find(|dir| repo.ws.path().join(dir).join("HEAD").exists())
        .expect("the repository is somewhere");
    assert_eq!(
        repo.ws.read(&format!("{repository}/config")),
        before,
        "renames: {renamed}"
    );
    repo.assert_still_works(0);
}

#[test]
fn a_hard_link_racing_a_repository_swapped_for_a_decoy_never_reaches_it() {
    let repo = Repo::new();
    ship_bare_repository(&repo);
    // The decoy has no `config`: any link that is made links the
    // repository's own, a second name to write it through.
    repo.ws.mkdir("decoy");
    let (linked, _) = race(
        &repo,
        json!({"op": "swap", "a": "bare", "b": "decoy", "ms": RACE_MS + 1000}),
        json!({"op": "race_link", "from": "bare/config", "to": "src/config", "ms": RACE_MS}),
    );
    assert!(linked.starts_with("won 0 of "), "{linked}");
    repo.assert_still_works(0);
}

#[test]
fn a_tool_that_declares_itself_read_only_may_not_write() {
    let repo = Repo::new();
    let before = fs_snapshot(&repo);
    for input in [
        json!({"op": "write", "path": "src/new.txt", "text": "x"}),
        json!({"op": "mkdir", "path": "src/dir"}),
        json!({"op": "rename", "from": "src/main.rs", "to": "src/moved.rs"}),
        json!({"op": "unlink", "path": "src/main.rs"}),
        json!({"op": "symlink", "link": "src/l", "target": "main.rs"}),
    ] {
        let err = stderr_of_failure(
            &mut repo
                .ws
                .call("raw_ro", &input.to_string(), &["--allow-write", "."]),
            1,
        );
        assert!(
            err.starts_with("error: `raw_ro` may not write `src/")
                && err.ends_with(
                    "`: the tool declares itself read-only, so toolhost gives it no write \
                     access, whatever its grants. Use a tool that writes.\n"
                ),
            "{input}: {err}"
        );
    }
    assert_eq!(fs_snapshot(&repo), before);
    // Its grants say so wherever they are shown.
    let listed = stdout_of(
        repo.ws
            .toolhost()
            .args(["--allow-write", ".", "tools", "--json"]),
    );
    let doc: serde_json::Value = serde_json::from_str(&listed).expect("json");
    let raw_ro = doc["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "raw_ro")
        .expect("raw_ro listed");
    let grants: Vec<(&str, &str)> = raw_ro["grants"]
        .as_array()
        .expect("grants")
        .iter()
        .map(|g| {
            (
                g["path"].as_str().expect("path"),
                g["access"].as_str().expect("access"),
            )
        })
        .collect();
    assert_eq!(grants, [(".", "read-only")]);
    // The same call by the tool that does not claim to be read-only works.
    repo.assert_still_works(0);
}

/// Everything in `src` with its content.
fn fs_snapshot(repo: &Repo) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = std::fs::read_dir(repo.ws.path().join("src"))
        .expect("read src")
        .map(|e| {
            let e = e.expect("entry");
            let content = std::fs::read_to_string(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), content)
        })
        .collect();
    out.sort();
    out
}

